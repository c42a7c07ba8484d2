"""Tick: claim one task and run one slice, the scheduler's alternative to a worker pool."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from taskqueue.queues.whole import TaskQueue
from taskqueue.runtime.runner import CapabilityRun, Stopping, claim_one, run_slice
from taskqueue.store.states import Status

log = logging.getLogger("signoff.tick")


@dataclass(frozen=True)
class TickReport:
    """What one tick did: the task it ran (None when nothing was claimable) and the outcome."""

    capability: str
    task_id: int | None
    outcome: str | None
    status: Status | None


class Tick:
    """Every N minutes the scheduler calls `run_once()`: one claim, at most one slice."""

    def __init__(self, queue: TaskQueue, run: CapabilityRun, worker: str,
                 stopping: Stopping | None = None) -> None:
        self.queue = queue
        self.run = run
        self.worker = worker
        self.stopping = stopping or Stopping()

    async def run_once(self) -> TickReport:
        if self.stopping.requested.is_set():
            return TickReport(self.run.capability, None, None, None)
        task = await claim_one(self.queue, self.run, self.worker)
        if task is None:
            report = TickReport(self.run.capability, None, None, None)
        else:
            done = await run_slice(self.queue, task, self.run, self.worker, self.stopping)
            report = TickReport(self.run.capability, task.id, done.outcome, done.status)
        log.info("tick ran capability=%s task=%s outcome=%s", report.capability,
                 report.task_id, report.outcome)
        return report
