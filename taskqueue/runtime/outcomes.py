"""OutcomeBuffer: a worker's complete/release/fail outcomes, applied in batches on a short timer.

Slices hand their outcome to the buffer and wait. The buffer sends what has gathered after
`flush_seconds` (or at once when `max_batch` are waiting, or every slice that could still
hand one in is waiting already) as one statement per kind (task_settle_many), each task
fenced on its own claim token, and answers each slice only after that statement
committed: with the task's new status, or the LeaseLost / TaskNotFound of that task alone, or
the error of the whole statement (a transient one is retried by the slice, and the fence
makes a retry of an outcome that did commit a LeaseLost, never a second change). The idea
is PgQueuer's buffered acknowledgements (`buffers.py`), with the per-task fence kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from taskqueue.errors import BadInput
from taskqueue.queues.worker import WorkerQueue
from taskqueue.store.batches import Completion, Failure, Releasing, SettledStatus
from taskqueue.store.checks import check_delay, check_json
from taskqueue.store.states import Status

# Defaults: how long the first outcome waits for others (seconds), and a batch's size.
DEFAULT_FLUSH_SECONDS = 0.005
DEFAULT_MAX_BATCH = 64

Item = Completion | Releasing | Failure
_Waiting = list[tuple[Any, "asyncio.Future[Status]"]]


class OutcomeBuffer:
    """Batches the outcomes of one worker process; `await aclose()` before the pool closes."""

    def __init__(self, queue: WorkerQueue, *, flush_seconds: float = DEFAULT_FLUSH_SECONDS,
                 max_batch: int = DEFAULT_MAX_BATCH,
                 in_flight: Callable[[], int] | None = None,
                 on_flush: Callable[[], None] | None = None) -> None:
        self.queue = queue
        self.flush_seconds = flush_seconds
        self.max_batch = max_batch
        # How many slices are alive (the pool's, those whose outcome is here included):
        # once every one of them has handed in its outcome, nobody else is coming, so
        # waiting out the timer would only add latency.
        self.in_flight = in_flight
        # Told when a batch is about to go out: the slots of its slices may take new work
        # while it commits (one claim for the whole batch, not one per outcome handed in).
        self.on_flush = on_flush
        self.outstanding = 0  # outcomes handed in and not yet answered
        # One statement per kind a flush, each answering the tasks' new statuses only.
        self._apply: Callable[[Sequence[Any]], Awaitable[SettledStatus]] = (
            queue.task_settle_many)
        self._waiting: dict[type, _Waiting] = {kind: [] for kind in (Completion, Releasing,
                                                                      Failure)}
        self._timer: asyncio.TimerHandle | None = None
        self._flushes: set[asyncio.Task[None]] = set()

    async def settle(self, item: Item) -> Status:
        """Apply one outcome with the others gathered now; returns the task's new status
        once committed."""
        # Checked here so that one slice's bad outcome never fails the others' batch.
        check_json(getattr(item, "result", None), "the result", self.queue.limits)
        check_json(getattr(item, "state", None), "the state", self.queue.limits)
        if isinstance(item, Releasing):
            check_delay(item.delay)
        if isinstance(item, Failure) and not item.error.strip():
            raise BadInput("the error must not be empty")
        future: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
        self._waiting[type(item)].append((item, future))
        self.outstanding += 1
        waiting = sum(len(w) for w in self._waiting.values())
        if waiting >= self.max_batch or (self.in_flight is not None
                                         and self.outstanding >= self.in_flight()):
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_seconds, self.flush)
        try:
            return await future
        finally:
            self.outstanding -= 1

    def flush(self) -> None:
        """Send everything waiting now (one statement per kind)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batches = [waiting for waiting in self._waiting.values() if waiting]
        if not batches:
            return
        self._waiting = {kind: [] for kind in self._waiting}
        # The claimer is told first: its claim for the freed slots is what they wait on, so
        # it goes out ahead of the batch (the claimer's wake-up is queued on the loop before
        # the send), and the batch's commit overlaps the claim instead of delaying it.
        if self.on_flush is not None:
            self.on_flush()
        for waiting in batches:
            task = asyncio.create_task(self._send(self._apply, waiting))
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)

    async def aclose(self) -> None:
        """Send what waits and wait for every batch in flight."""
        self.flush()
        if self._flushes:
            await asyncio.gather(*self._flushes, return_exceptions=True)

    @staticmethod
    async def _send(apply: Callable[[Sequence[Any]], Awaitable[SettledStatus]],
                    waiting: _Waiting) -> None:
        try:
            settled = await apply([item for item, _ in waiting])
        except Exception as exc:
            for _, future in waiting:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(waiting, settled, strict=True):
            if future.done():  # its slice was cancelled meanwhile; nothing to tell it
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)
