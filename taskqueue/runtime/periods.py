"""A producer's periods (day, hour, ISO week): the one spelling each is stored under, and
the strict reading of a period someone names (`signoff produce --period`)."""

from __future__ import annotations

import re
from datetime import date, datetime

from taskqueue.errors import BadInput

# The canonical spelling of each kind, as `period_of` writes it and the scheduler stores it.
FORMS = {"day": "YYYY-MM-DD", "hour": "YYYY-MM-DDTHH", "week": "YYYY-Www"}
EXAMPLES = {"day": "2026-12-01", "hour": "2026-12-01T02", "week": "2026-W49"}
# The other ISO 8601 spellings a person may type for the same period; each is read into
# the canonical one, so one period never runs twice under two spellings. ASCII digits only
# (re.ASCII): `\d` alone would take '２０２６'.
_SPELLINGS = {
    "day": re.compile(r"(?P<y>\d{4})-?(?P<m>\d{2})-?(?P<d>\d{2})", re.ASCII),
    "hour": re.compile(r"(?P<y>\d{4})-?(?P<m>\d{2})-?(?P<d>\d{2})T(?P<h>\d{2})"
                       r"(?::?00(?::?00)?)?", re.ASCII),
    "week": re.compile(r"(?P<y>\d{4})-?W(?P<w>\d{2})", re.ASCII),
}
# Longer than any spelling above: refused before a pattern sees it, and not echoed whole.
_MAX_CHARS = 24


def period_of(when: datetime, period: str) -> str:
    """The period a run belongs to: 2026-12-01 (day), 2026-12-01T02 (hour), 2026-W49 (week)."""
    if period == "hour":
        return when.strftime("%Y-%m-%dT%H")
    if period == "week":
        year, week, _ = when.isocalendar()
        return f"{year}-W{week:02d}"
    return when.date().isoformat()


def period_start(text: str, period: str) -> datetime:
    """When the period `text` (any accepted spelling) begins, as a naive local time;
    BadInput naming the value and the expected form when it is no such period."""
    match = (_SPELLINGS[period].fullmatch(text) if len(text) <= _MAX_CHARS else None)
    try:
        if match is None:
            raise ValueError
        n = {k: int(v) for k, v in match.groupdict().items()}
        if period == "week":
            return datetime.combine(date.fromisocalendar(n["y"], n["w"], 1), datetime.min.time())
        return datetime(n["y"], n["m"], n["d"], n.get("h", 0))
    except ValueError:
        raise BadInput(f"a {period} period looks like {EXAMPLES[period]} ({FORMS[period]}), "
                       f"not {shown(text)}") from None


def canonical_period(text: str, period: str) -> str:
    """The stored spelling of the period `text` names (`20261201` → `2026-12-01`)."""
    return period_of(period_start(text, period), period)


def is_future(text: str, period: str, now: datetime) -> bool:
    """Whether the period `text` begins after the one `now` (a local time) is in."""
    current = period_start(period_of(now, period), period)
    return period_start(text, period) > current


def shown(text: str) -> str:
    """`text` quoted for a one-line message, cut short when it is longer than any period."""
    return repr(text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS] + "…")
