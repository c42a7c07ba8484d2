"""Text the commands, digests and alerts show: queue counts, signals, a task, open approvals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from bot.telegram.render import escape, outcome, person, when
from taskqueue import Approval, Signal, Signals, TaskDetail

HELP = (
    "<b>Signoff</b>: approval requests arrive here with Approve, Revise and Skip buttons.\n"
    "Revise asks for a note: your next message in this chat (or a reply to the request).\n\n"
    "/queue: per capability, tasks by status and the oldest waiting\n"
    "/signals: incident and nudge, firing or ok, and whose move it is\n"
    "/task ID: a task's status, history and latest approval\n"
    "/pending: re-send the unanswered approvals\n"
    "/retry ID: put a failed, expired or cancelled task back to pending\n"
    "/cancel ID: cancel an unfinished task\n"
    "/help: this message"
)

COMMANDS = (
    ("queue", "Tasks by capability and status"),
    ("signals", "Incident and nudge signals"),
    ("task", "A task's status and history: /task ID"),
    ("pending", "Re-send unanswered approvals"),
    ("retry", "Retry a failed task: /retry ID"),
    ("cancel", "Cancel a task: /cancel ID"),
    ("help", "What this bot does"),
)


def age(since: datetime | None, now: datetime | None = None) -> str:
    """A short age: 45 min, 3.2 h, 2.0 d."""
    if since is None:
        return "-"
    seconds = ((now or datetime.now(UTC)) - since).total_seconds()
    if seconds < 3600:
        return f"{max(0, round(seconds / 60))} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def queue_text(rows: Sequence[dict[str, Any]]) -> str:
    """/queue: per capability, counts by status and the oldest waiting task's age."""
    if not rows:
        return "The queue is empty: no unfinished tasks and nothing finished today."
    lines = ["<b>Queue</b>"]
    for capability, group in groupby(rows, key=lambda r: r["capability"]):
        items = list(group)
        counts = " · ".join(f"{r['status']} {r['n']}" for r in items)
        waiting = [r["oldest_waiting_since"] for r in items if r["oldest_waiting_since"]]
        oldest = f"; oldest waiting {age(min(waiting))}" if waiting else ""
        lines.append(f"<b>{escape(capability)}</b>: {counts}{oldest}")
    return "\n".join(lines)


def _signal_line(sig: Signal) -> str:
    state = "🔴 firing" if sig.firing else "🟢 ok"
    move = "the system's move" if sig.owner == "system" else "your move"
    return (f"<b>{sig.name}</b>: {state}; {sig.count} {escape(sig.meaning)} "
            f"(fires above {sig.threshold}; oldest {sig.oldest_age_hours:.1f} h); {move}")


def signals_text(s: Signals) -> str:
    """/signals: each signal with its state, count, threshold and owner, plus context."""
    # The outcome's keys come from the database: escaped like everything else read there.
    reaper = (f"{when(s.reaper_at)}: " + ", ".join(
        f"{escape(k.replace('_', ' '))} {int(v)}" for k, v in (s.reaper_outcome or {}).items())
    ) if s.reaper_at else "never"
    return "\n".join([
        "<b>Signals</b>", _signal_line(s.incident), _signal_line(s.nudge),
        f"Open approvals: {s.open_approvals} · expired (24 h): {s.expired_approvals} · "
        f"failed (24 h): {s.failed_last_day}",
        f"Reaper last ran {reaper}",
    ])


def task_text(detail: TaskDetail, events: int = 10) -> str:
    """/task ID: status, attempts, last error, recent history and the latest approval."""
    t = detail.task
    lines = [f"<b>Task {t.id}</b> · {escape(t.capability)} · <b>{t.status.value}</b>",
             f"Attempts {t.attempts}/{t.max_attempts} · created {when(t.created_at)}"]
    if t.last_error:
        lines.append(f"Last error: {escape(t.last_error[:300])}")
    if t.approval:
        a = t.approval
        state = outcome(a) if a.decision else f"open, expires {when(a.expires_at)}"
        lines.append(f"Latest approval: {escape(a.question[:300])}\n{state}")
    lines.append("<b>History</b>")
    for e in detail.events[-events:]:
        to = e.detail.get("to")
        lines.append(f"{when(e.at)} {escape(e.kind)}" + (f" → {escape(to)}" if to else "")
                     + (f" by {escape(person(e.actor))}" if e.actor else ""))
    return "\n".join(lines)


def digest_text(open_approvals: Sequence[Approval], now: datetime | None = None,
                limit: int = 30) -> str:
    """The nudge digest: unanswered approvals with their age, oldest first."""
    ordered = sorted(open_approvals, key=lambda a: (a.created_at, a.id))
    lines = [f"⏰ <b>{len(ordered)} approval{'s' if len(ordered) != 1 else ''} waiting "
             "for you</b>, oldest first:"]
    for a in ordered[:limit]:
        lines.append(f"• task {a.task_id}: {escape(a.question[:120])} "
                     f"({age(a.created_at, now)})")
    if len(ordered) > limit:
        lines.append(f"… and {len(ordered) - limit} more. /pending re-sends them all.")
    return "\n".join(lines)


def alert_text(body: dict[str, Any]) -> str:
    """An alert notification (a signal changed state), as a message."""
    try:
        sig = Signal(name=str(body["name"]), firing=bool(body["firing"]),
                     count=int(body["count"]), threshold=int(body["threshold"]),
                     age_hours=float(body["age_hours"]),
                     oldest_age_hours=float(body["oldest_age_hours"]),
                     owner=str(body["owner"]), meaning=str(body["meaning"]))
    except (KeyError, TypeError, ValueError):
        state = "firing" if body.get("firing") else "ok"
        return f"🚨 <b>Alert</b> {escape(body.get('name', '?'))}: {state}"
    return incident_text(sig) if sig.firing else recovery_text(sig)


def incident_text(sig: Signal) -> str:
    """The alert when the incident signal starts firing."""
    return (f"🚨 <b>Incident</b>: {sig.count} {escape(sig.meaning)} (threshold "
            f"{sig.threshold}, oldest {sig.oldest_age_hours:.1f} h). Workers may be down; "
            "check <code>signoff signals</code> and the service logs.")


def recovery_text(sig: Signal) -> str:
    """The message when the incident signal stops firing."""
    return (f"✅ <b>Recovered</b>: the incident signal is ok again ({sig.count} "
            f"{escape(sig.meaning)}).")
