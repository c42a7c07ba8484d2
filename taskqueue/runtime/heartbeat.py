"""Heartbeat: keeps a claimed task's lease alive while its handler runs, and notices loss."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from types import TracebackType

from taskqueue.errors import TRANSIENT, LeaseLost, TaskNotFound, one_line
from taskqueue.queues.worker import WorkerQueue
from taskqueue.runtime.backoff import Backoff
from taskqueue.store.models import Task

log = logging.getLogger("signoff.heartbeat")

# Heartbeat this many times per lease, so two missed beats still leave time.
BEATS_PER_LEASE = 3
# While the database is away a beat is retried within this many seconds (or the interval,
# if shorter): full jitter up to it (runtime/backoff.py), so the heartbeats of every task
# that lost the database at the same moment do not all retry together.
RETRY_CAP = 1.0

# What a heartbeat reports when the claim is gone.
SignoffLeaseLoss = LeaseLost | TaskNotFound


class Heartbeat:
    """`async with Heartbeat(...)`: beat every lease/3; on LeaseLost call `on_lost` once.

    A beat that fails because the database is away is retried sooner (`retry`, jittered);
    only a lost lease (the reaper took the task, or it was cancelled) ends the heartbeat.
    """

    def __init__(self, queue: WorkerQueue, task: Task, worker: str, *, lease: float,
                 on_lost: Callable[[SignoffLeaseLoss], None] | None = None) -> None:
        self.queue = queue
        self.task = task
        self.worker = worker
        self.lease = lease
        self.interval = max(lease / BEATS_PER_LEASE, 0.05)
        self.on_lost = on_lost
        self.lost: SignoffLeaseLoss | None = None
        self._first: asyncio.TimerHandle | None = None
        self._runner: asyncio.Task[None] | None = None
        self.retry: Backoff | None = None  # made at the first failed beat: most never fail

    async def __aenter__(self) -> Heartbeat:
        # A timer until the first beat: most slices end before it, and a timer costs less
        # to set and cancel than a task.
        self._first = asyncio.get_running_loop().call_later(self.interval, self._start)
        return self

    def _start(self) -> None:
        self._runner = asyncio.create_task(self._run(), name=f"heartbeat-{self.task.id}")

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._first is not None:
            self._first.cancel()
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner

    async def _run(self) -> None:
        # Started by the timer when the first beat is due: beat, then sleep until the next.
        failing = False
        step = min(self.interval, RETRY_CAP)
        while True:
            try:
                await self.queue.task_heartbeat(self.task.id, self.worker,
                                                claim=self.task.claim, lease=self.lease)
            except (LeaseLost, TaskNotFound) as exc:
                self._lose(exc)
                return
            except TRANSIENT as exc:
                if not failing:  # once per outage; it keeps trying quietly
                    log.warning("heartbeat failed, database unavailable task=%s worker=%s: %s",
                                self.task.id, self.worker, one_line(exc))
                failing = True
            else:
                if failing:
                    log.info("heartbeat ok again task=%s worker=%s", self.task.id, self.worker)
                    if self.retry is not None:
                        self.retry.reset()
                failing = False
            await asyncio.sleep(self._retry_in(step) if failing else self.interval)

    def _retry_in(self, step: float) -> float:
        if self.retry is None:
            self.retry = Backoff(step, step)
        return self.retry.next()

    def _lose(self, exc: LeaseLost | TaskNotFound) -> None:
        self.lost = exc
        log.warning("lease lost task=%s capability=%s worker=%s: %s", self.task.id,
                    self.task.capability, self.worker, exc)
        if self.on_lost is not None:
            self.on_lost(exc)
