"""Input checks the API runs before it touches the database: each raises BadInput (or a
conflict for a decided approval) with a message naming what is wrong."""

from __future__ import annotations

import uuid
from typing import Any

from taskqueue.errors import AlreadyDecided, ApprovalExpired, BadInput
from taskqueue.store.models import NewTask
from taskqueue.store.states import Decision, Status


def check_capability(capability: str) -> None:
    if not capability or not capability.strip() or len(capability) > 200:
        raise BadInput("a capability name must be 1 to 200 characters")


def check_new_task(item: NewTask) -> None:
    if not isinstance(item.payload, dict):
        raise BadInput("a payload must be a JSON object")
    if not -(2**31) <= item.priority < 2**31:
        raise BadInput("a priority must be a 32-bit whole number")
    check_delay(item.delay)
    if item.max_attempts is not None and item.max_attempts < 1:
        raise BadInput("max-attempts must be at least 1")
    if item.dedupe_key is not None and not item.dedupe_key:
        raise BadInput("a dedupe key must not be empty")


def check_delay(delay: float) -> None:
    if delay < 0:
        raise BadInput("a delay must not be negative")


def check_claim(claim: str | None) -> str | None:
    if claim is None:
        return None

    try:
        return str(uuid.UUID(claim))
    except ValueError:
        raise BadInput(f"claim token {claim!r} is not a UUID") from None


def check_status(status: Status | str) -> str:
    try:
        return Status(status).value
    except ValueError:
        raise BadInput(f"unknown status {status!r}; one of: "
                       + ", ".join(s.value for s in Status)) from None


def check_decision(decision: Decision | str, by: str, note: str | None) -> Decision:
    try:
        choice = Decision(decision)
    except ValueError:
        choice = None
    if choice is None or choice is Decision.EXPIRED:
        raise BadInput(f"a decision is approved, revised or skipped, not {decision!r}")
    if not by or not by.strip():
        raise BadInput("a decision must name who made it")
    if choice is Decision.REVISED and not (note and note.strip()):
        raise BadInput("a revise decision needs a note")
    return choice


def refuse_decided(row: dict[str, Any]) -> None:
    if row["decision"] == Decision.EXPIRED:
        raise ApprovalExpired(f"approval {row['id']} of task {row['task_id']} expired at "
                              f"{row['decided_at'].isoformat()}")
    if row["decision"] is not None:
        raise AlreadyDecided(
            f"approval {row['id']} of task {row['task_id']} was already {row['decision']} "
            f"by {row['decided_by']} at {row['decided_at'].isoformat()}",
            decided_by=row["decided_by"], decision=row["decision"])


INT_SETTINGS = {"max_running", "max_parked", "daily_new"}


def check_setting(key: str, value: Any) -> None:
    if key == "day_timezone":
        if not isinstance(value, str) or not value:
            raise BadInput("day_timezone must be a time zone name")
        return
    if value is None and key in INT_SETTINGS:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadInput(f"{key} must be a whole number")
    minimum = 0 if key in INT_SETTINGS or key == "retry_base_seconds" else 1
    if value < minimum:
        raise BadInput(f"{key} must be at least {minimum}")


def check_json(value: Any, what: str) -> None:
    """BadInput when a JSON value holds U+0000, which PostgreSQL's jsonb cannot store."""
    if _has_nul(value):
        raise BadInput(f"{what} holds a \\u0000 character, which PostgreSQL's jsonb cannot store")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False
