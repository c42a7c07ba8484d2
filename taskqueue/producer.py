"""Producers: scheduled callables that enqueue one period's work, idempotently per period."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from taskqueue.client import Enqueued, TaskQueue
from taskqueue.models import JSON

log = logging.getLogger("signoff.producer")


def period_of(when: datetime, period: str) -> str:
    """The period a run belongs to: 2026-12-01 (day), 2026-12-01T02 (hour), 2026-W49 (week)."""
    if period == "hour":
        return when.strftime("%Y-%m-%dT%H")
    if period == "week":
        year, week, _ = when.isocalendar()
        return f"{year}-W{week:02d}"
    return when.date().isoformat()


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
    name: str
    capability: str
    period: str
    created: int
    existing: int


class ProducerJob:
    """One producer on its schedule; the scheduler calls `run_once(fired_at)`."""

    def __init__(self, queue: TaskQueue, name: str, capability: str, producer: Producer, *,
                 period: str = "day", timezone: str = "UTC") -> None:
        self.queue = queue
        self.name = name
        self.capability = capability
        self.producer = producer
        self.period = period
        self.tz = ZoneInfo(timezone)

    async def run_once(self, fired_at: datetime | None = None) -> ProducerReport:
        """Run for the period of `fired_at` (the schedule's time; default now)."""
        when = (fired_at or datetime.now(self.tz)).astimezone(self.tz)
        ctx = ProducerContext(self.queue, self.name, self.capability,
                              period_of(when, self.period), when)
        await self.producer(self.queue, ctx)
        report = ProducerReport(self.name, self.capability, ctx.period, ctx.created,
                                ctx.existing)
        log.info("producer ran name=%s capability=%s period=%s created=%d existing=%d",
                 report.name, report.capability, report.period, report.created,
                 report.existing)
        return report
