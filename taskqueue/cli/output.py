"""How the CLI prints: JSON documents, and plain-text tables for people.

Nothing read from the database reaches the terminal raw: text goes through `safe()`, which
shows control characters (newlines, escape sequences, bidi overrides) as escapes.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from taskqueue.cli.request_text import request_lines
from taskqueue.errors import human_time, printable

if TYPE_CHECKING:
    from taskqueue.maintenance.signals import Signal, Signals
    from taskqueue.store.models import Capability, Task, TaskDetail

# C1 controls and DEL pass json.dumps raw with ensure_ascii=False; CSI (\x9b) alone can
# drive some terminals. Bidi overrides reorder what a reader sees.
_JSON_UNSAFE = re.compile("[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def print_json(doc: Any) -> None:
    text = json.dumps(doc, indent=2, ensure_ascii=False, default=str)
    print(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def safe(value: object) -> str:
    """Text for a terminal: control and bidi characters shown as escapes, never raw."""
    return printable(value)


def when(value: datetime | None) -> str:
    return "-" if value is None else human_time(value)


def age(value: datetime | None) -> str:
    if value is None:
        return "-"
    seconds = max(0, int((datetime.now(UTC) - value).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def task_line(task: Task, as_json: bool, detail: str) -> None:
    if as_json:
        print_json(task.to_json())
    else:
        print(f"task {task.id} {task.status}: {safe(detail)}")


def _table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _short(text: str | None, width: int = 50) -> str:
    if not text:
        return ""
    line = text.splitlines()[0]
    return line if len(line) <= width else line[: width - 1] + "…"


def print_task_table(tasks: list[Task]) -> None:
    if not tasks:
        print("no tasks")
        return
    # FAILS: failed attempts of those allowed (a task released or parked and resumed runs
    # again without failing; `signoff show` counts its runs).
    _table(["ID", "CAPABILITY", "STATUS", "PRI", "FAILS", "WORKER", "AGE", "LAST ERROR"],
           [[str(t.id), safe(t.capability), t.status.value, str(t.priority),
             f"{t.attempts}/{t.max_attempts}", safe(t.worker or ""), age(t.created_at),
             safe(_short(t.last_error))] for t in tasks])


def print_detail(detail: TaskDetail) -> None:
    t = detail.task
    runs = sum(1 for e in detail.events if e.kind == "claimed")
    fields = [("id", t.id), ("capability", t.capability), ("status", t.status.value),
              ("priority", t.priority),
              ("runs", f"{runs} so far ({t.attempts} failed of {t.max_attempts} allowed)"),
              ("worker", t.worker or "-"), ("lease until", when(t.lease_expires_at)),
              ("run after", when(t.run_after)), ("created", when(t.created_at)),
              ("updated", when(t.updated_at)), ("dedupe key", t.dedupe_key or "-"),
              ("last error", t.last_error or "-")]
    for name, value in fields:
        print(f"{name + ':':<13}{safe(value)}")
    for name, doc in (("payload", t.payload), ("state", t.state), ("result", t.result)):
        _print_document(name, doc)
    for a in detail.approvals:
        decided = (f"{a.decision.value} by {safe(a.decided_by or '-')} at {when(a.decided_at)}"
                   if a.decision else f"open, expires {when(a.expires_at)}")
        print(f"\napproval {a.id}: {safe(a.question)}\n  {decided}")
        if a.required > 1 or len(a.approvals) > 1:
            print(f"  approvals ({a.approved_count} of {a.required} required):")
            for v in a.approvals:
                mark = "" if v.counted else " (the requester: not counted)"
                print(f"    {safe(v.by)} at {when(v.at)}{mark}")
        if a.note:
            print(f"  note: {safe(a.note)}")
        if a.is_open and a.request:
            print("  request:")
            for line in request_lines(a.request, indent="    "):
                print(line)
        for f in a.attachments:
            print(f"  attachment {f.id}: {safe(f.filename)} ({safe(f.content_type)}, "
                  f"{f.size_bytes} bytes)")
    print("\nevents:")
    for e in detail.events:
        moved = (f"{safe(e.detail.get('from', ''))}→{safe(e.detail.get('to', ''))}"
                 if "to" in e.detail else "")
        print(f"  {when(e.at)}  {safe(e.kind):<12} {moved:<26} {safe(e.actor or '')}")


def _print_document(name: str, doc: Any) -> None:
    """A payload, state or result: one `key: value` line each, nested keys indented (the same
    reading as a request's); a scalar or an empty one stays on its line."""
    if isinstance(doc, dict) and doc:
        print(f"{name}:")
        for line in request_lines(doc, indent="  "):
            print(line)
    else:
        print(f"{name + ':':<13}{safe(json.dumps(doc, ensure_ascii=False))}")


def _signal_line(s: Signal) -> str:
    """One signal as a sentence: its state, what it counts, when it fires, whose move."""
    state = "FIRING" if s.firing else "ok"
    move = "the system's move" if s.owner == "system" else "a person's move"
    return (f"{s.name}: {state}: {s.count} {safe(s.meaning)} (fires above {s.threshold}; "
            f"oldest {s.oldest_age_hours:.1f} h); {move}")


def print_signals(signals: Signals) -> None:
    print(_signal_line(signals.incident))
    print(_signal_line(signals.nudge))
    print(f"open approvals: {signals.open_approvals}")
    print(f"expired approvals (last day): {signals.expired_approvals}")
    print(f"failed tasks (last day): {signals.failed_last_day}")
    if signals.reaper_at is None:
        print("reaper: never ran")
    else:
        counts = safe(" ".join(f"{k}={v}" for k, v in (signals.reaper_outcome or {}).items()))
        ran = f"{when(signals.reaper_at)} ({age(signals.reaper_at)} ago)"
        print(f"reaper: last ran {ran}: {counts}")


def print_caps(caps: list[Capability]) -> None:
    if not caps:
        print("no capability settings (no caps anywhere)")
        return

    def show(v: int | None) -> str:
        return "-" if v is None else str(v)

    _table(["CAPABILITY", "MAX RUNNING", "MAX PARKED", "DAILY NEW", "TZ", "LEASE", "TTL",
            "ATTEMPTS"],
           [[safe(c.capability), show(c.max_running), show(c.max_parked), show(c.daily_new),
             safe(c.day_timezone), f"{c.lease_seconds}s", f"{c.approval_ttl_seconds}s",
             str(c.max_attempts)] for c in caps])
