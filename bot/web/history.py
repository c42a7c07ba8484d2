"""A task's history in words: each event of `task_events` as a person says it ("claimed by
host-a", "parked: Submit …?", "approved by alice (1 of 2)"); the raw detail stays beside it,
folded away by the page."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bot.people import person_shown as person
from taskqueue import Event

Words = Callable[[str, Mapping[str, Any]], str]
DECISIONS = {"approved": "approved", "revised": "sent back for a revision",
             "skipped": "skipped", "expired": "expired"}


def _decided(who: str, d: Mapping[str, Any]) -> str:
    text = f"{DECISIONS.get(str(d.get('decision')), str(d.get('decision')))} by {who}"
    return text + (f": “{d['note']}”" if d.get("note") else "")


def _partly(who: str, d: Mapping[str, Any]) -> str:
    if not d.get("counted", True):
        return f"approved by {who} (who asked for it, so it does not count)"
    return f"approved by {who} ({d.get('approved')} of {d.get('required')})"


def _failed(who: str, d: Mapping[str, Any]) -> str:
    error = str(d.get("error") or "an error")
    if d.get("to") == "failed":
        return f"failed for good on {who}: {error}"
    return f"failed on {who}: {error}; it will be tried again"


def _reaped(who: str, d: Mapping[str, Any]) -> str:
    worker = d.get("worker") or "its worker"
    if d.get("to") == "failed":
        return f"failed for good: the lease of {worker} ran out after its last attempt"
    if d.get("orphan"):
        return "put back in the queue: it was left running with no lease"
    return f"put back in the queue: the lease of {worker} ran out"


def _cancelled(who: str, d: Mapping[str, Any]) -> str:
    return f"cancelled by {who}" + (f": {d['reason']}" if d.get("reason") else "")


_WORDS: dict[str, Words] = {
    "enqueued": lambda who, d: "enqueued" + (f" (dedupe key {d['dedupe_key']})"
                                             if d.get("dedupe_key") else ""),
    "claimed": lambda who, d: f"claimed by {who}",
    "released": lambda who, d: f"released by {who}: back in the queue",
    "state_saved": lambda who, d: f"state saved by {who}",
    "parked": lambda who, d: f"parked: {d.get('question', 'a question')}",
    "approved_partly": _partly,
    "decided": _decided,
    "completed": lambda who, d: f"succeeded on {who}",
    "failed": _failed,
    "reaped": _reaped,
    "expired": lambda who, d: "expired: nobody answered in time",
    "cancelled": _cancelled,
    "retried": lambda who, d: f"retried by {who}",
    "reminded": lambda who, d: "reminded: still waiting for an answer",
    "escalated": lambda who, d: "escalated to " + (", ".join(map(str, d.get("to") or []))
                                                    or "the escalation list"),
    "notified": lambda who, d: f"shown in {d.get('channel', 'a channel')}",
}


def words(event: Event) -> str:
    """What happened, in words; an unknown kind as its name."""
    say = _WORDS.get(event.kind)
    who = person(event.actor) if event.actor else "someone"
    detail = event.detail if isinstance(event.detail, Mapping) else {}
    if say is None:
        return event.kind.replace("_", " ") + (f" by {who}" if event.actor else "")
    return say(who, detail)
