"""Producers: scheduled callables that enqueue one period's work, idempotently per period."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from taskqueue.queues.whole import TaskQueue
from taskqueue.runtime.periods import canonical_period, period_of
from taskqueue.runtime.worker import default_worker_name
from taskqueue.store.models import JSON
from taskqueue.store.work_models import Enqueued

log = logging.getLogger("signoff.producer")


@dataclass
class ProducerContext:
    """What a producer gets: its name, capability and period, and an `enqueue` that keys
    each task by period so a second run of the same period (another instance, a restart)
    inserts nothing."""

    queue: TaskQueue
    name: str
    capability: str
    period: str
    fired_at: datetime
    created: int = 0
    existing: int = 0
    log: logging.LoggerAdapter[logging.Logger] = field(init=False)

    def __post_init__(self) -> None:
        self.log = logging.LoggerAdapter(log, {"producer": self.name, "period": self.period})

    def dedupe_key(self, *parts: object) -> str:
        """`name:period`, plus any parts (`name:period:posting-17`)."""
        return ":".join([self.name, self.period, *(str(p) for p in parts)])

    async def enqueue(self, payload: JSON | None = None, *, key: tuple[object, ...] = (),
                      capability: str | None = None, **options: Any) -> Enqueued:
        """Enqueue with the period's dedupe key (extended by `key` for several per period)."""
        done = await self.queue.task_enqueue(
            capability or self.capability, payload, dedupe_key=self.dedupe_key(*key),
            actor=f"producer:{self.name}", **options)
        if done.created:
            self.created += 1
        else:
            self.existing += 1
        return done


Producer = Callable[[TaskQueue, ProducerContext], Awaitable[Any]]


@dataclass(frozen=True)
class ProducerReport:
    """What one firing did; `ran` is False when its period was already done (or running)."""

    name: str
    capability: str
    period: str
    created: int
    existing: int
    ran: bool = True
    report: JSON | None = None


# How long a run holds its period before another runner may take it over (a runner that
# died part way); a run that raises gives its period back at once.
DEFAULT_RUN_LEASE = 900.0


def _report_json(result: Any) -> JSON | None:
    """What a producer returned, as the JSON report stored with its run."""
    if hasattr(result, "to_json"):
        result = result.to_json()
    return result if isinstance(result, dict) else None


class ProducerJob:
    """One producer on its schedule; the scheduler calls `run_once(fired_at)`.

    Each (capability, producer, period) runs to completion once: the run is recorded in
    `producer_runs` before the producer starts, so a second firing of a finished period
    (a restart, a second instance, `signoff produce`) enqueues nothing and stores no
    second report."""

    def __init__(self, queue: TaskQueue, name: str, capability: str, producer: Producer, *,
                 period: str = "day", timezone: str = "UTC", runner: str | None = None,
                 lease: float = DEFAULT_RUN_LEASE) -> None:
        self.queue = queue
        self.name = name
        self.capability = capability
        self.producer = producer
        self.period = period
        self.tz = ZoneInfo(timezone)
        self.runner = runner or default_worker_name()
        self.lease = lease

    def period_for(self, fired_at: datetime | None = None) -> str:
        """The period of `fired_at` (the schedule's time; default now)."""
        when = (fired_at or datetime.now(self.tz)).astimezone(self.tz)
        return period_of(when, self.period)

    async def run_once(self, fired_at: datetime | None = None, *,
                       period: str | None = None) -> ProducerReport:
        """Run for the period of `fired_at` (or the `period` named, in any spelling
        `canonical_period` reads; BadInput when it names no such period), once per period."""
        when = (fired_at or datetime.now(self.tz)).astimezone(self.tz)
        period = (period_of(when, self.period) if period is None
                  else canonical_period(period, self.period))
        run = await self.queue.producer_run_begin(self.capability, self.name, period,
                                                  self.runner, lease=self.lease)
        if run is None:
            log.info("producer skipped name=%s capability=%s period=%s: period already ran",
                     self.name, self.capability, period)
            return ProducerReport(self.name, self.capability, period, 0, 0, ran=False)
        ctx = ProducerContext(self.queue, self.name, self.capability, period, when)
        try:
            result = await self.producer(self.queue, ctx)
        except Exception:
            await self.queue.producer_run_abandon(run)
            raise
        report = ProducerReport(self.name, self.capability, period, ctx.created,
                                ctx.existing, report=_report_json(result))
        await self.queue.producer_run_finish(run, created=report.created,
                                             existing=report.existing, report=report.report)
        log.info("producer ran name=%s capability=%s period=%s created=%d existing=%d",
                 report.name, report.capability, report.period, report.created,
                 report.existing)
        return report
