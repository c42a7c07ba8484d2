"""The daily producer: one briefing task per day, keyed by the day.

The core runs each (capability, producer, period) once (`producer_runs`) and
`ProducerContext.enqueue` keys the task by the period, so a restart, a second service
instance or `signoff produce briefing` the same day enqueues nothing more.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from taskqueue import Config, ConfigError, ProducerContext
from taskqueue.queues.producer import ProducerQueue
from workloads.briefing.settings import load_settings

__all__ = ["check_config", "daily"]


async def daily(queue: ProducerQueue, context: ProducerContext) -> dict[str, Any]:
    """Enqueue the briefing of the period's day (`workloads.briefing.producer:daily`)."""
    day = _day(context.period)
    done = await context.enqueue({"day": day.isoformat(), "title": f"Daily briefing {day}"})
    return {"day": day.isoformat(), "task_id": done.id, "created": done.created}


def _day(period: str) -> date:
    try:
        return date.fromisoformat(period)
    except ValueError:
        raise ConfigError(f"the briefing producer runs per day; period {period!r} is not "
                          "a date (set period = \"day\")") from None


def check_config(config: Config) -> None:
    """At start: the section parses and every producer of this module runs per day."""
    load_settings(config.path) if config.path else load_settings()
    for cap in config.capabilities.values():
        for p in cap.producers:
            if p.function.startswith(f"{__name__}:") and p.period != "day":
                raise ConfigError(f"capabilities.{cap.name}.producers {p.name!r}: the "
                                  f"briefing runs per day, not per {p.period}")
