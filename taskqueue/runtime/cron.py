"""Cron schedules: the five-field form (read as cron(8) reads it) and the @hourly-style
nicknames, as APScheduler triggers, and the next times one fires."""

from __future__ import annotations

import re
import warnings
from datetime import datetime
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

# The nicknames cron(8) knows, as the five fields they stand for.
NICKNAMES = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# cron(8)'s weekdays: 0 and 7 are Sunday. APScheduler 3 counts 0 = Monday … 6 = Sunday,
# so the weekday field is translated here and never handed to APScheduler as written.
DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_DOW_TERM = re.compile(r"(?P<first>\*|\w+)(?:-(?P<last>\w+))?(?:/(?P<step>\d+))?")


def _day_number(text: str, *, range_end: bool = False) -> int:
    """A weekday as cron(8) numbers it (0-7); `sun` ending a range is 7, so `mon-sun` and
    `sat-sun` read as written."""
    name = text.lower()
    if name in DAY_NAMES:
        return 7 if range_end and name == "sun" else DAY_NAMES.index(name)
    if not text.isascii() or not text.isdigit() or int(text) > 7:
        raise ValueError(f"weekday {text!r} is not 0-7 (0 and 7 are Sunday) or sun-sat")
    return int(text)


def _weekday_term(term: str) -> set[int]:
    """One comma-separated term of the weekday field as cron(8) days (0 = Sunday … 6)."""
    match = _DOW_TERM.fullmatch(term)
    if match is None:
        raise ValueError(f"weekday term {term!r} is not N, N-M, */S or N-M/S")
    first, last, step = match["first"], match["last"], match["step"]
    if first == "*":
        if last is not None:
            raise ValueError(f"weekday term {term!r} is not N, N-M, */S or N-M/S")
        low, high = 0, 7
    else:
        low = _day_number(first)
        # cron(8): `N/S` runs from N to the field's end, a lone `N` is just N.
        high = _day_number(last, range_end=True) if last else (7 if step else low)
    if low > high:
        raise ValueError(f"weekday range {term!r} runs backwards")
    if step is not None and int(step) == 0:
        raise ValueError(f"weekday step in {term!r} is 0")
    return {day % 7 for day in range(low, high + 1, int(step or 1))}


def weekdays_for_apscheduler(field: str) -> str:
    """cron(8)'s weekday field as APScheduler's day_of_week (a list of 0 = Monday days)."""
    days: set[int] = set()
    for term in field.split(","):
        days |= _weekday_term(term)
    return ",".join(str(d) for d in sorted((day - 1) % 7 for day in days))


def cron_trigger(expr: str, timezone: str) -> BaseTrigger:
    """The trigger for `expr` (five fields or a nickname) in `timezone`; ValueError names
    what is wrong.

    As in cron(8), when both day of month and day of week are restricted (neither starts
    with `*`) the schedule fires on a day matching either; otherwise on days matching both.
    """
    fields = NICKNAMES.get(expr.strip().lower(), expr)
    if fields.startswith("@"):
        raise ValueError(f"unknown nickname {expr!r}; known: {', '.join(NICKNAMES)}")
    if len(fields.split()) != 5:
        raise ValueError("a cron schedule has 5 fields (min hour day month weekday) or is "
                         f"one of {', '.join(NICKNAMES)}: {expr!r}")
    minute, hour, day, month, weekday = fields.split()
    dow = "*" if weekday == "*" else weekdays_for_apscheduler(weekday)
    tz = ZoneInfo(timezone)

    def cron(day: str, day_of_week: str) -> CronTrigger:
        return CronTrigger(minute=minute, hour=hour, day=day, month=month,
                           day_of_week=day_of_week, timezone=tz)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # APScheduler's pytz-era deprecations
        if day.startswith("*") or weekday.startswith("*"):
            return cron(day, dow)
        return OrTrigger([cron(day, "*"), cron("*", dow)])


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
