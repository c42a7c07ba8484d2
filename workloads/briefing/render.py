"""The briefing as Telegram HTML and as plain text (Jinja2), short enough for one message.

Both versions render the same view. Database text was made visible (no control
characters) and cut when it was read; the HTML environment autoescapes it as well, and its
template uses only the tags Telegram shows (<b> <i> <code>). When the HTML is longer than
`max_chars`, the lists are shortened (each ends with "… and N more") until it fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import TYPE_CHECKING, Any

from workloads.briefing.gather import OUTCOMES, Briefing, Group
from workloads.briefing.settings import BriefingSettings
from workloads.briefing.text import age, when

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["Rendered", "render", "view"]

ICONS = dict(zip(OUTCOMES, ("✅", "⏭", "⌛", "❌", "🚫"), strict=True))
# Workloads and producers listed at most, however long the lists may be.
MAX_ROWS = 30


@cache
def _env(autoescape: bool) -> Environment:
    """The HTML (autoescape) or the text environment, built with Jinja2 when the first
    briefing is rendered: the service that only waits for 07:30 never loads Jinja2
    (issue 26, goal 8)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("workloads.briefing", "templates"),
                       autoescape=autoescape, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)


@dataclass(frozen=True)
class Rendered:
    """A briefing ready to send: subject, plain text, HTML, and the list length used."""

    subject: str
    text: str
    html: str
    items: int


def _day(value: date) -> str:
    return f"{value:%a} {value.day} {value:%b %Y}"


def _workload(cap: str, groups: list[Group], limit: int) -> dict[str, Any]:
    items, more = [], []
    for g in groups:
        shown = g.items[:limit]
        items += [{"icon": ICONS[g.status], "id": i.id, "name": i.name, "error": i.error}
                  for i in shown]
        if g.total > len(shown):
            more.append(f"{g.total - len(shown)} more {g.status}")
    return {"capability": cap, "tasks": items, "more": more,
            "summary": " · ".join(f"{g.total} {g.status}" for g in groups)}


def _reaper(b: Briefing) -> str:
    at = b.signals.reaper_at
    if at is None:
        return "has not run yet"
    outcome = b.signals.reaper_outcome or {}
    did = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in outcome.items())
    return f"last ran {when(at, b.now)} ({age(at, b.now)} ago){': ' + did if did else ''}"


def _duration(seconds: float) -> str:
    """A time to decide, short: `40 s`, `12 min`, `5.5 h`, `2.1 d`."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 172800 else f"{seconds / 86400:.1f} d"


def _decisions(b: Briefing, limit: int) -> dict[str, Any] | None:
    """Yesterday's answers: counts by decision, the median time, what expired (the expired
    tasks' ids and names, the question where the payload names nothing); None when no
    question was answered or expired."""
    d = b.decisions
    if d is None or not (d.decided or d.expired):
        return None
    counts = {"approved": d.approved, "revised": d.revised, "skipped": d.skipped,
              "expired": d.expired or 0}
    expired = [{"id": i.id, "capability": i.capability, "name": i.name}
               for g in b.groups if g.status == "expired" for i in g.items[:limit]]
    return {"summary": " · ".join(f"{n} {k}" for k, n in counts.items() if n),
            "median": None if d.p50_seconds is None else _duration(d.p50_seconds),
            "expired": expired, "expired_more": (d.expired or 0) - len(expired)}


def view(b: Briefing, limit: int, rows: int = MAX_ROWS,
         questions: int | None = None) -> dict[str, Any]:
    """What both templates show: `limit` tasks per outcome, `rows` workloads and producers,
    `questions` open questions (default `limit`)."""
    caps: dict[str, list[Group]] = {}
    for g in b.groups:
        caps.setdefault(g.capability, []).append(g)
    workloads = [_workload(cap, groups, limit) for cap, groups in list(caps.items())[:rows]]
    signals = [{"icon": "🔥" if s.firing else "🟢", "name": s.name, "count": s.count,
                "meaning": s.meaning, "threshold": s.threshold}
               for s in (b.signals.incident, b.signals.nudge)]
    waiting = [{"id": i.id, "capability": i.capability, "name": i.name, "age": i.age}
               for i in b.waiting[:limit if questions is None else questions]]
    return {
        "day": _day(b.day), "covers": _day(b.covers), "timezone": b.timezone,
        "empty": b.empty, "workloads": workloads, "more_workloads": len(caps) - len(workloads),
        "waiting": waiting, "waiting_total": b.waiting_total,
        "waiting_more": b.waiting_total - len(waiting), "signals": signals,
        "reaper": _reaper(b), "decisions": _decisions(b, limit),
        "upcoming": [{"when": when(u.at, b.now), "capability": u.capability,
                      "producer": u.producer} for u in b.upcoming[:rows]],
    }


def _sizes(most: int) -> list[tuple[int, int, int]]:
    """(tasks per outcome, workloads, questions) to try, longest first. What waits on you
    is cut last: first the finished tasks' names, then workloads, then questions."""
    return ([(n, MAX_ROWS, most) for n in range(most, -1, -1)]
            + [(0, r, most) for r in (15, 8, 4)]
            + [(0, 4, q) for q in range(most - 1, -1, -1)])


def render(b: Briefing, settings: BriefingSettings) -> Rendered:
    """Both versions, lists shortened until the HTML fits `settings.max_chars` (past the
    shortest, the Telegram channel sends it as a document)."""
    template = _env(True).get_template("briefing.html.j2")
    for limit, rows, questions in _sizes(settings.max_items):
        doc = view(b, limit, rows, questions)
        html = template.render(**doc).strip()
        if len(html) <= settings.max_chars:
            break
    text = _env(False).get_template("briefing.txt.j2").render(**doc).strip()
    return Rendered(f"Briefing · {_day(b.day)}", text, html, limit)
