"""WorkerPool: N slots claiming and running tasks of some capabilities until told to stop,
and one more slot for the tasks a person answered."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from taskqueue.errors import TRANSIENT, one_line
from taskqueue.queues.whole import TaskQueue
from taskqueue.runtime.backoff import Backoff
from taskqueue.runtime.listener import Listener
from taskqueue.runtime.outcomes import OutcomeBuffer
from taskqueue.runtime.runner import CapabilityRun, SliceReport, Stopping, claim_many, run_slice
from taskqueue.runtime.waits import wait_at_most
from taskqueue.store.base import ANSWERS_CHANNEL, TASKS_CHANNEL
from taskqueue.store.models import Task

log = logging.getLogger("signoff.worker")

# Defaults (seconds): polling is the fallback to NOTIFY; grace is what SIGTERM allows.
DEFAULT_POLL_INTERVAL = 5.0
DEFAULT_GRACE = 30.0
# Backoff while the database is away (seconds): full jitter under a cap that doubles from
# MIN up to MAX (runtime/backoff.py).
BACKOFF_MIN = 0.2
BACKOFF_MAX = 10.0
# How many of the latest slice reports a pool keeps.
REPORTS_KEPT = 1000
# After the grace period, how long releasing what still runs may take (seconds).
ABORT_WAIT = 15.0


def default_worker_name() -> str:
    """host:pid, so `signoff ls` shows where a running task is."""
    return f"{socket.gethostname()}:{os.getpid()}"


# Told of every finished slice: capability, outcome (SliceReport.outcome) and seconds.
SliceObserver = Callable[[str, str, float], None]


@dataclass(frozen=True)
class WorkerConfig:
    """A pool's settings: slots, the polling fallback, the shutdown grace and its name;
    `on_slice` (optional) is called after each slice, e.g. to feed a metrics histogram.
    `answer_slots` run tasks a person answered while the `concurrency` slots are all busy,
    so an answer never queues behind bulk work (0: answers wait for a free slot)."""

    concurrency: int = 1
    answer_slots: int = 1
    poll_interval: float = DEFAULT_POLL_INTERVAL
    grace: float = DEFAULT_GRACE
    name: str = field(default_factory=default_worker_name)
    listen: bool = True
    on_slice: SliceObserver | None = None


class _Health:
    """Whether the database answers, so an outage is logged once and its end once."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.down = False
        self.backoff = Backoff(BACKOFF_MIN, BACKOFF_MAX)

    def failed(self, exc: BaseException) -> float:
        if not self.down:
            log.warning("database unavailable worker=%s; retrying with backoff: %s",
                        self.worker, one_line(exc))
        self.down = True
        return self.backoff.next()

    def ok(self) -> None:
        if self.down:
            log.info("database reachable again worker=%s", self.worker)
        self.down = False
        self.backoff.reset()


class WorkerPool:
    """Run `await pool.run()`; `pool.stop()` (SIGTERM) stops claiming, waits `grace`, then
    releases what still runs with its saved state. One claimer fills all free slots with
    one claim statement per capability; it wakes on NOTIFY, on a slice ending, or by
    polling. Outcomes are applied in batches (OutcomeBuffer)."""

    def __init__(self, queue: TaskQueue, runs: Sequence[CapabilityRun],
                 config: WorkerConfig | None = None, *, dsn: str | None = None) -> None:
        if not runs:
            raise ValueError("a worker pool needs at least one capability")
        self.queue = queue
        self.runs = tuple(runs)
        self.config = config or WorkerConfig()
        self.name = self.config.name
        self.dsn = dsn or str(queue.pool.conninfo)
        self.stopping = Stopping()
        # The latest slices' reports (tests and diagnostics read them); older ones are
        # dropped, so a pool that runs for months does not grow without bound.
        self.reports: deque[SliceReport] = deque(maxlen=REPORTS_KEPT)
        self.slices = 0
        # Its subscription to the process's shared LISTEN connection, while it runs.
        self.listener: Listener | None = None
        # A slot frees once its handler returned and its outcome went out in a batch, so
        # the next claim overlaps that batch's commit.
        self.outcomes = OutcomeBuffer(queue, in_flight=lambda: len(self._slices),
                                      on_flush=self.wake)
        self._health = _Health(self.name)
        self._wake = asyncio.Event()
        self._slices: set[asyncio.Task[None]] = set()
        # The slices in answer slots (also in _slices, for the grace and the stop), and
        # whether a person answered a task of ours since the last claim of answers.
        self._answering: set[asyncio.Task[None]] = set()
        self._answered = False

    @property
    def _running(self) -> int:
        """Slices in the `concurrency` slots whose handler still runs (an outcome on its
        way to the database is not; an answer slot's outcome is applied by its slice)."""
        return len(self._slices) - len(self._answering) - self.outcomes.outstanding

    def stop(self) -> None:
        """Begin a graceful stop (safe to call from a signal handler, more than once)."""
        if not self.stopping.requested.is_set():
            log.info("worker stopping name=%s running=%d grace=%gs", self.name, self._running,
                     self.config.grace)
        self.stopping.requested.set()
        self.wake()

    def wake(self) -> None:
        """Make the claimer try to fill free slots now."""
        self._wake.set()

    async def run(self) -> None:
        caps = ",".join(r.capability for r in self.runs)
        log.info("worker started name=%s capabilities=%s concurrency=%d poll_interval=%gs",
                 self.name, caps, self.config.concurrency, self.config.poll_interval)
        listening = asyncio.create_task(self._listen()) if self.config.listen else None
        claimer = asyncio.create_task(self._claim_loop(), name="claimer")
        try:
            await self.stopping.requested.wait()
            # A claim in flight finishes and its tasks run; then the slices get the grace.
            deadline = asyncio.get_running_loop().time() + self.config.grace
            await asyncio.wait({claimer}, timeout=self.config.grace)
            pending = await self._wait_slices(deadline - asyncio.get_running_loop().time())
            if pending:
                log.info("grace period over; releasing running tasks name=%s count=%d",
                         self.name, self._running)
                self.stopping.abort.set()
                # Slices release at once; a claim stuck on a dead database is given up.
                await asyncio.wait({claimer, *pending}, timeout=ABORT_WAIT)
        finally:
            rest = [claimer, *self._slices, *([listening] if listening else [])]
            for t in rest:
                t.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
            await self.outcomes.aclose()
        log.info("worker stopped name=%s slices=%d", self.name, self.slices)

    async def _wait_slices(self, timeout: float) -> set[asyncio.Task[None]]:
        if not self._slices:
            return set()
        _, pending = await asyncio.wait(set(self._slices), timeout=max(timeout, 0))
        return pending

    async def _listen(self) -> None:
        wanted = {r.capability for r in self.runs}

        def on_notify(channel: str, payload: str | None) -> None:
            if payload is None or payload in wanted:
                # None: the connection came back and may have missed an answer.
                self._answered = self._answered or payload is None or channel == ANSWERS_CHANNEL
                self.wake()

        # One connection per process and database: the other pools and parts share it.
        self.listener = Listener(self.dsn, [TASKS_CHANNEL, ANSWERS_CHANNEL], on_notify)
        listening = asyncio.create_task(self.listener.run())
        try:
            # A NOTIFY sent before LISTEN took hold reached nobody (a task enqueued while
            # the pool started, or while the server refused new connections): claim once
            # it has, rather than at the next poll. Reconnects say so themselves (None).
            await self.listener.connected.wait()
            on_notify(TASKS_CHANNEL, None)
            await listening
        finally:
            listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listening

    async def _claim_loop(self) -> None:
        turn = 0
        while not self.stopping.requested.is_set():
            self._wake.clear()
            free = self.config.concurrency - self._running
            answers = self.config.answer_slots - len(self._answering)
            if free <= 0 and not (self._answered and answers > 0):
                await self._wake.wait()  # a slice ending, an answer (or stop) sets it
                continue
            # A claim with free slots takes answered work first (the claim's order).
            self._answered = False
            try:
                if free <= 0:
                    for task, run in await self._claim_batch(turn, answers, answered=True):
                        self._start(task, run, answer=True)
                    continue
                claimed = await self._claim_batch(turn, free)
            except TRANSIENT as exc:
                self._answered = self._answered or free <= 0  # still unclaimed
                await self._idle(self._health.failed(exc))
                continue
            except Exception:
                log.exception("claim failed worker=%s", self.name)
                await self._idle(self.config.poll_interval)
                continue
            turn += 1
            for task, run in claimed:
                self._start(task, run)
            if len(claimed) < free:
                await self._idle(self.config.poll_interval)

    async def _claim_batch(self, turn: int, free: int, *, answered: bool = False
                           ) -> list[tuple[Task, CapabilityRun]]:
        """Up to `free` tasks (only answered ones if `answered`), one claim per capability,
        starting at a different one per turn (round robin)."""
        claimed: list[tuple[Task, CapabilityRun]] = []
        for k in range(len(self.runs)):
            run = self.runs[(turn + k) % len(self.runs)]
            tasks = await claim_many(self.queue, run, self.name, free - len(claimed),
                                     answered_only=answered)
            self._health.ok()
            claimed.extend((task, run) for task in tasks)
            if len(claimed) >= free:
                break
        return claimed

    def _start(self, task: Task, run: CapabilityRun, *, answer: bool = False) -> None:
        slice_ = asyncio.create_task(self._run(task, run, answer), name=f"slice-{task.id}")
        self._slices.add(slice_)
        if answer:
            self._answering.add(slice_)
        slice_.add_done_callback(self._ended)

    def _ended(self, slice_: asyncio.Task[None]) -> None:
        self._slices.discard(slice_)
        self._answering.discard(slice_)
        self.wake()

    async def _run(self, task: Task, run: CapabilityRun, answer: bool = False) -> None:
        started = time.monotonic()
        outcome = "crashed"
        try:
            # An answer slot applies its own outcome: the batch's bookkeeping counts the
            # `concurrency` slots' outcomes only.
            report = await run_slice(self.queue, task, run, self.name, self.stopping,
                                     None if answer else self.outcomes)
            self.reports.append(report)
            self.slices += 1
            outcome = report.outcome
        except Exception:
            log.exception("slice crashed task=%s worker=%s", task.id, self.name)
        finally:
            self._observe(run.capability, outcome, time.monotonic() - started)

    def _observe(self, capability: str, outcome: str, seconds: float) -> None:
        if self.config.on_slice is None:
            return
        try:
            self.config.on_slice(capability, outcome, seconds)
        except Exception:  # an observer's bug must not stop the slot
            log.exception("slice observer failed worker=%s", self.name)

    async def _idle(self, delay: float) -> None:
        await wait_at_most(self._wake, delay)
