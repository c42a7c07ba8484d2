"""What a briefing says, read from the database and the config: yesterday's outcomes and
decisions, open questions, failures, signals, the reaper's last run and the producers' next runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from taskqueue import (
    Config,
    DecisionStats,
    Signals,
    Task,
    TaskQueue,
    cron_trigger,
    read_signals,
)
from workloads.briefing.settings import BriefingSettings
from workloads.briefing.text import age, visible

__all__ = ["OUTCOMES", "Briefing", "Group", "Item", "Upcoming", "gather", "next_runs",
           "task_name"]

# The finished statuses a briefing reports, in the order it shows them.
OUTCOMES = ("succeeded", "skipped", "expired", "failed", "cancelled")
# Open questions read at most (the oldest are shown; the count is exact up to this).
MAX_OPEN = 1000


@dataclass(frozen=True)
class Item:
    """One task as a line: its id and name, and an error or an age where it has one."""

    id: int
    capability: str
    name: str
    error: str = ""
    age: str = ""


@dataclass(frozen=True)
class Group:
    """One capability's tasks of one outcome yesterday: the total and the latest few."""

    capability: str
    status: str
    total: int
    items: tuple[Item, ...] = ()


@dataclass(frozen=True)
class Upcoming:
    """A producer's next run."""

    capability: str
    producer: str
    at: datetime


@dataclass(frozen=True)
class Briefing:
    """Everything one day's briefing shows; `day` is the briefing's date, `covers` the day
    before it (its outcomes), both in the config's time zone."""

    day: date
    covers: date
    timezone: str
    now: datetime
    groups: tuple[Group, ...]
    waiting: tuple[Item, ...]
    waiting_total: int
    signals: Signals
    upcoming: tuple[Upcoming, ...] = field(default_factory=tuple)
    # Yesterday's answers across capabilities (TaskQueue.decision_stats' total row).
    decisions: DecisionStats | None = None

    def totals(self) -> dict[str, int]:
        """Per outcome, tasks finished on `covers` across capabilities."""
        out = dict.fromkeys(OUTCOMES, 0)
        for g in self.groups:
            out[g.status] += g.total
        return out

    @property
    def empty(self) -> bool:
        """Nothing finished, answered or expired, nothing waits, no signal fires: a
        one-line briefing."""
        answered = self.decisions is not None and bool(
            self.decisions.decided or self.decisions.expired)
        return (not self.groups and not self.waiting_total and not answered
                and not self.signals.incident.firing and not self.signals.nudge.firing)


def task_name(task: Task, settings: BriefingSettings) -> str:
    """The first of the payload's name fields that holds text, else the latest question."""
    for key in settings.name_fields:
        value = task.payload.get(key) if isinstance(task.payload, dict) else None
        if isinstance(value, str | int | float) and str(value).strip():
            return visible(value, settings.name_chars)
    if task.approval is not None:
        return visible(task.approval.question, settings.name_chars)
    return ""


def next_runs(config: Config, now: datetime) -> tuple[Upcoming, ...]:
    """Each configured producer's next fire time after `now`, soonest first."""
    tz = ZoneInfo(config.timezone)
    out = []
    for cap in config.capabilities.values():
        for p in cap.producers:
            # The core's reading of the schedule, so the briefing names the runs that happen.
            trigger = cron_trigger(p.cron, config.timezone)
            at = trigger.get_next_fire_time(None, now.astimezone(tz))
            if at is not None:
                out.append(Upcoming(cap.name, p.name, at))
    return tuple(sorted(out, key=lambda u: (u.at, u.capability, u.producer)))


async def gather(queue: TaskQueue, config: Config, settings: BriefingSettings, day: date,
                 now: datetime) -> Briefing:
    """Read one day's briefing; `day`'s outcomes are those of the day before it."""
    tz = ZoneInfo(config.timezone)
    covers = day - timedelta(days=1)
    since = datetime.combine(covers, time(), tz)
    until = datetime.combine(day, time(), tz)
    finished = await queue.task_list_finished(since, until,
                                              per_group=max(1, settings.max_items))
    waiting = await queue.task_list(status="needs_approval", limit=MAX_OPEN)
    signals = await read_signals(queue, config.signals)
    totals = [r for r in await queue.decision_stats(since=since, until=until)
              if r.scope == "total"]
    return Briefing(
        day=day, covers=covers, timezone=config.timezone, now=now.astimezone(tz),
        groups=_groups(finished, settings), waiting=_waiting(waiting, settings, now),
        waiting_total=len(waiting), signals=signals, upcoming=next_runs(config, now),
        decisions=totals[0] if totals else None)


def _groups(finished: list[tuple[Task, int]], settings: BriefingSettings) -> tuple[Group, ...]:
    by_key: dict[tuple[str, str], Group] = {}
    for task, total in finished:
        key = (task.capability, task.status.value)
        group = by_key.get(key, Group(task.capability, task.status.value, total))
        error = visible(task.last_error or "", settings.error_chars) if task.last_error else ""
        item = Item(task.id, task.capability, task_name(task, settings), error=error)
        by_key[key] = Group(group.capability, group.status, group.total, (*group.items, item))
    order = {s: i for i, s in enumerate(OUTCOMES)}
    return tuple(sorted(by_key.values(), key=lambda g: (g.capability, order[g.status])))


def _waiting(tasks: list[Task], settings: BriefingSettings, now: datetime) -> tuple[Item, ...]:
    """The oldest open questions first."""
    open_ = [t for t in tasks if t.approval is not None and t.approval.is_open]
    open_.sort(key=lambda t: (t.approval.created_at if t.approval else now, t.id))
    return tuple(Item(t.id, t.capability, task_name(t, settings),
                      age=age(t.approval.created_at, now) if t.approval else "")
                 for t in open_[: settings.max_items])
