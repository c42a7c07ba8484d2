"""One slice of work: run a claimed task's handler under heartbeat, timeout and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from taskqueue.errors import TRANSIENT, BadInput, LeaseLost, TaskNotFound
from taskqueue.queues.whole import TaskQueue
from taskqueue.queues.worker import WorkerQueue
from taskqueue.runtime.backoff import Backoff
from taskqueue.runtime.gate import ActionUncertain, NotApproved
from taskqueue.runtime.handler import Done, Fail, Handler, Outcome, Park, Release, TaskContext
from taskqueue.runtime.heartbeat import Heartbeat
from taskqueue.runtime.outcomes import OutcomeBuffer
from taskqueue.store.batches import Completion, Failure, Releasing
from taskqueue.store.checks import MAX_ERROR_CHARS, MAX_TRACEBACK_CHARS
from taskqueue.store.models import Task
from taskqueue.store.states import Status

log = logging.getLogger("signoff.worker")

# How long a cancelled handler may take to unwind before it is abandoned (seconds).
UNWIND_SECONDS = 5.0
# Backoff ceiling while an outcome waits for the database to come back (seconds).
APPLY_BACKOFF_MAX = 5.0


@dataclass(frozen=True)
class CapabilityRun:
    """How a worker runs one capability: its handler, lease and per-slice timeout (seconds)."""

    capability: str
    handler: Handler
    lease: float
    timeout: float | None = None


class Signal(asyncio.Event):
    """An asyncio.Event that also calls plain callbacks when it is set, so that each slice
    watches the shutdown and its lease with a callback instead of a task of its own."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        for callback in list(self._callbacks):
            callback()

    def watch(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when set (now, if it is); returns what stops the watch."""
        if self.is_set():
            callback()
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback)


@dataclass
class Stopping:
    """Shutdown, in two steps: `requested` (claim no more, ask handlers to wrap up), then
    `abort` (cancel what still runs and release it with its saved state)."""

    requested: Signal = field(default_factory=Signal)
    abort: Signal = field(default_factory=Signal)


@dataclass(frozen=True)
class SliceReport:
    """What one slice did: `outcome` is done, parked, released, failed, error, timeout,
    shutdown or lease_lost; `status` is the task's status after it (None if discarded)."""

    task_id: int
    capability: str
    outcome: str
    status: Status | None


def log_transition(task: Task, old: str, new: str, worker: str) -> None:
    """The one structured line per transition: `grep task=42` tells a task's story."""
    log.info("task transition task=%s capability=%s from=%s to=%s worker=%s",
             task.id, task.capability, old, new, worker)


def claimed_from(task: Task) -> str:
    """The status a just-claimed task came from (pending, or approved after a decision)."""
    return task.claimed_from.value if task.claimed_from is not None else "pending"


async def claim_one(queue: WorkerQueue, run: CapabilityRun, worker: str) -> Task | None:
    """Claim the next task of `run.capability` and log the transition."""
    task = await queue.task_claim(run.capability, worker, lease=run.lease)
    if task is not None:
        log_transition(task, claimed_from(task), "running", worker)
    return task


async def claim_many(queue: WorkerQueue, run: CapabilityRun, worker: str, n: int, *,
                     answered_only: bool = False) -> list[Task]:
    """Claim up to `n` tasks of `run.capability` in one statement and log each transition."""
    tasks = await queue.task_claim_many(run.capability, worker, n, lease=run.lease,
                                        answered_only=answered_only)
    for task in tasks:
        log_transition(task, claimed_from(task), "running", worker)
    return tasks


async def run_slice(queue: TaskQueue, task: Task, run: CapabilityRun, worker: str,
                    stopping: Stopping | None = None,
                    outcomes: OutcomeBuffer | None = None) -> SliceReport:
    """Run one slice of a claimed task and apply its outcome under the claim's fence
    (through `outcomes`, batched with other slices' outcomes, when given)."""
    stopping = stopping or Stopping()
    ctx = TaskContext(task, queue, worker, lease=run.lease)
    lost = Signal()
    async with Heartbeat(queue, task, worker, lease=run.lease, on_lost=lambda _: lost.set()):
        kind, value = await _supervise(run.handler(task, ctx), ctx, lost, stopping, run.timeout)
    return await _finish(queue, task, worker, kind, value, stopping, outcomes)


async def _supervise(coro: Any, ctx: TaskContext, lost: Signal, stopping: Stopping,
                     timeout: float | None) -> tuple[str, Any]:
    """Await the handler; stop it on lease loss, abort or timeout. Returns (kind, value)."""
    loop = asyncio.get_running_loop()
    handler = loop.create_task(coro, name=f"handler-{ctx.task.id}")
    # Whichever comes first ends the wait: the handler's end, a lost lease, the abort or the
    # timeout (callbacks on one future: asyncio.wait would build sets and a waiter a slice).
    stop: asyncio.Future[None] = loop.create_future()

    def wake(*_: Any) -> None:
        if not stop.done():
            stop.set_result(None)

    handler.add_done_callback(wake)
    timer = loop.call_later(timeout, wake) if timeout is not None else None
    unwatch = [lost.watch(wake), stopping.abort.watch(wake),
               stopping.requested.watch(ctx.cancelled.set)]  # ask the handler to wrap up
    finished = False
    try:
        await stop
        finished = handler.done()
    finally:
        for end in unwatch:
            end()
        if timer is not None:
            timer.cancel()
        handler.remove_done_callback(wake)
        stop.cancel()
        if not handler.done():
            await _cancel(handler, ctx)
    if lost.is_set():
        return "lease_lost", None
    if finished:
        exc = handler.exception()
        return ("error", exc) if exc is not None else ("outcome", handler.result())
    return ("shutdown", None) if stopping.abort.is_set() else ("timeout", timeout)


async def _cancel(handler: asyncio.Task[Any], ctx: TaskContext) -> None:
    ctx.cancelled.set()
    handler.cancel()
    done, _ = await asyncio.wait({handler}, timeout=UNWIND_SECONDS)
    if handler in done and not handler.cancelled():
        # A handler that swallowed the cancellation: whatever it returned is discarded.
        with contextlib.suppress(BaseException):
            handler.result()
    elif not done:
        ctx.log.warning("handler ignored cancellation for %.0fs; abandoned", UNWIND_SECONDS)


async def _finish(queue: WorkerQueue, task: Task, worker: str, kind: str, value: Any,
                  stopping: Stopping, outcomes: OutcomeBuffer | None) -> SliceReport:
    if kind == "error" and isinstance(value, LeaseLost | TaskNotFound):
        kind = "lease_lost"
    if kind == "lease_lost":
        log.warning("outcome discarded task=%s capability=%s worker=%s: lease lost",
                    task.id, task.capability, worker)
        return SliceReport(task.id, task.capability, "lease_lost", None)
    outcome, label = _outcome_for(task, kind, value)
    status = await _apply_with_retry(queue, task, worker, outcome, kind, stopping, outcomes)
    return SliceReport(task.id, task.capability, label if status else "lease_lost", status)


def _outcome_for(task: Task, kind: str, value: Any) -> tuple[Outcome | Fail, str]:
    if kind == "timeout":
        return Fail(f"timed out after {value:g} s"), "timeout"
    if kind == "shutdown":
        return Release(), "shutdown"
    if kind == "error" and isinstance(value, NotApproved):
        return Fail(f"refusing the gated action {value.kind}: {value}"[:MAX_ERROR_CHARS],
                    retryable=False), "failed"
    if kind == "error" and isinstance(value, ActionUncertain):
        return Park(value.question, request=value.request), "parked"
    if kind == "error":
        # Cut to the API's bounds: an exception's text must not stop its task from failing.
        text = "".join(traceback.format_exception(value))[-MAX_TRACEBACK_CHARS:]
        error = f"{type(value).__name__}: {value}"[:MAX_ERROR_CHARS]
        return _ErrorFail(error, traceback=text), "error"
    if not isinstance(value, Done | Park | Release | Fail):
        return Fail(f"handler returned {type(value).__name__}, not an outcome"), "error"
    label = ("done" if isinstance(value, Done) else "parked" if isinstance(value, Park)
             else "released" if isinstance(value, Release) else "failed")
    return value, label


@dataclass(frozen=True)
class _ErrorFail(Fail):
    """A retryable failure from an exception, with its traceback for the task's events."""

    traceback: str | None = None


async def _apply_with_retry(queue: WorkerQueue, task: Task, worker: str, outcome: Outcome,
                            kind: str, stopping: Stopping,
                            outcomes: OutcomeBuffer | None = None) -> Status | None:
    """Apply the outcome; while the database is away, retry (the claim token fences it)."""
    backoff, tries = Backoff(0.2, APPLY_BACKOFF_MAX), 0
    while True:
        tries += 1
        try:
            return await _apply(queue, task, worker, outcome, kind, outcomes)
        except (LeaseLost, TaskNotFound) as exc:
            note = " (it may have been applied before the connection dropped)" if tries > 1 else ""
            log.warning("outcome discarded task=%s capability=%s worker=%s: %s%s",
                        task.id, task.capability, worker, exc, note)
            return None
        except TRANSIENT as exc:
            if stopping.abort.is_set() and tries > 3:
                log.error("outcome not applied task=%s worker=%s: database unavailable; "
                          "the reaper will requeue it", task.id, worker)
                return None
            delay = backoff.next()
            log.warning("database unavailable while applying outcome task=%s worker=%s "
                        "retry_in=%.1fs error=%s", task.id, worker, delay, exc)
            await asyncio.sleep(delay)
        except BadInput as exc:
            outcome, kind = Fail(f"invalid outcome: {exc}"), "error"


async def _apply(queue: WorkerQueue, task: Task, worker: str, outcome: Outcome,
                 kind: str, outcomes: OutcomeBuffer | None = None) -> Status:
    fence: dict[str, Any] = {"claim": task.claim}
    batched = _batched(task, worker, outcome, kind) if outcomes is not None else None
    if outcomes is not None and batched is not None:
        new = await outcomes.settle(batched)
    elif isinstance(outcome, Done):
        new = (await queue.task_complete(task.id, worker, result=outcome.result, **fence)).status
    elif isinstance(outcome, Park):
        await queue.task_park(task.id, worker, outcome.question, request=outcome.request,
                              attachments=outcome.attachments, expires_in=outcome.expires_in,
                              state=outcome.state, required_approvals=outcome.required_approvals,
                              **fence)
        new = Status.NEEDS_APPROVAL
    elif isinstance(outcome, Release):
        reason = "shutdown" if kind == "shutdown" else None
        new = (await queue.task_release(task.id, worker, state=outcome.state,
                                        delay=outcome.delay, reason=reason, **fence)).status
    else:
        tb = outcome.traceback if isinstance(outcome, _ErrorFail) else None
        new = (await queue.task_fail(task.id, worker, outcome.error, retry=outcome.retryable,
                                     traceback=tb, **fence)).status
    log_transition(task, "running", new.value, worker)
    return new


def _batched(task: Task, worker: str, outcome: Outcome,
             kind: str) -> Completion | Releasing | Failure | None:
    """The outcome as an item of a batched update; None for a park (applied alone)."""
    if isinstance(outcome, Done):
        return Completion(task.id, worker, task.claim, outcome.result)
    if isinstance(outcome, Release):
        reason = "shutdown" if kind == "shutdown" else None
        return Releasing(task.id, worker, task.claim, outcome.state, outcome.delay, reason)
    if isinstance(outcome, Fail):
        tb = outcome.traceback if isinstance(outcome, _ErrorFail) else None
        return Failure(task.id, worker, task.claim, outcome.error, outcome.retryable, tb)
    return None
