"""Cron schedules: the five-field form and the @hourly-style nicknames, as APScheduler
CronTriggers, and the next times one fires."""

from __future__ import annotations

import warnings
from datetime import datetime
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger

# The nicknames cron(8) knows, as the five fields they stand for (Sunday spelled out:
# APScheduler counts weekday numbers from Monday, crontab from Sunday).
NICKNAMES = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * sun", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def cron_trigger(expr: str, timezone: str) -> CronTrigger:
    """The trigger for `expr` (five fields or a nickname) in `timezone`; ValueError names
    what is wrong."""
    fields = NICKNAMES.get(expr.strip().lower(), expr)
    if fields.startswith("@"):
        raise ValueError(f"unknown nickname {expr!r}; known: {', '.join(NICKNAMES)}")
    if len(fields.split()) != 5:
        raise ValueError("a cron schedule has 5 fields (min hour day month weekday) or is "
                         f"one of {', '.join(NICKNAMES)}: {expr!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CronTrigger.from_crontab(fields, timezone=ZoneInfo(timezone))


def cron_next(expr: str, timezone: str, count: int = 3,
              after: datetime | None = None) -> list[datetime]:
    """The next `count` times `expr` fires after `after` (default now), in `timezone`."""
    trigger = cron_trigger(expr, timezone)
    now = after or datetime.now(ZoneInfo(timezone))
    times: list[datetime] = []
    previous = None
    while len(times) < count:
        fire = trigger.get_next_fire_time(previous, now)
        if fire is None:
            break
        times.append(fire)
        previous, now = fire, fire
    return times
