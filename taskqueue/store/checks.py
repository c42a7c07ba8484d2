"""Input checks the API runs before it touches the database: each raises BadInput (or a
conflict for a decided approval) with a message naming what is wrong."""

from __future__ import annotations

import json
import math
import unicodedata
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taskqueue.errors import AlreadyDecided, ApprovalExpired, BadInput, did_you_mean, human_time
from taskqueue.store.states import Decision, Status

if TYPE_CHECKING:
    from taskqueue.store.work_models import NewTask

DEFAULT_MAX_JSON_BYTES = 1024 * 1024
DEFAULT_MAX_JSON_DEPTH = 64
DEFAULT_MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
# Python refuses to print whole numbers past 4300 digits; nobody's payload needs 1000.
MAX_INT_DIGITS = 1000
_INT_BOUND = 10**MAX_INT_DIGITS

# Text bounds (characters). A question and a note are read by a person on a phone; a name
# is a label; a dedupe key sits in a btree index, whose rows must stay under ~2700 bytes.
MAX_NAME_CHARS = 200
MAX_DEDUPE_KEY_CHARS = 500
MAX_QUESTION_CHARS = 10_000
MAX_NOTE_CHARS = 10_000
MAX_ERROR_CHARS = 65_536
MAX_TRACEBACK_CHARS = 262_144


@dataclass(frozen=True)
class Limits:
    """A queue's size limits on what it stores: JSON values (payload, state, result,
    request: bytes as compact UTF-8 JSON, and nesting depth) and each attachment."""

    max_json_bytes: int = DEFAULT_MAX_JSON_BYTES
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH
    max_attachment_bytes: int = DEFAULT_MAX_ATTACHMENT_BYTES

    def __post_init__(self) -> None:
        for name in ("max_json_bytes", "max_json_depth", "max_attachment_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise BadInput(f"{name} must be a whole number of at least 1, not {value!r}")


DEFAULT_LIMITS = Limits()


def check_text(value: str | None, what: str, limit: int, *, required: bool = False) -> None:
    """BadInput when a text is past `limit` characters (or empty when `required`)."""
    if value is None:
        if required:
            raise BadInput(f"{what} is required")
        return
    if required and not value.strip():
        raise BadInput(f"{what} must not be empty")
    if len(value) > limit:
        raise BadInput(f"{what} is {len(value)} characters, over the limit of {limit}")
    if "\x00" in value:
        raise BadInput(f"{what} holds a NUL character, which PostgreSQL text cannot store")


def check_name(value: str | None, what: str, *, required: bool = False) -> None:
    """A worker's or a person's name: a label, so no control characters."""
    check_text(value, what, MAX_NAME_CHARS, required=required)
    if value and any(unicodedata.category(ch) == "Cc" for ch in value):
        raise BadInput(f"{what} holds a control character")


def check_capability(capability: str) -> None:
    if not capability or not capability.strip() or len(capability) > MAX_NAME_CHARS:
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
    check_text(item.dedupe_key, "a dedupe key", MAX_DEDUPE_KEY_CHARS)


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
        names = [s.value for s in Status]
        raise BadInput(f"unknown status {status!r}{did_you_mean(str(status), names)} "
                       f"(one of: {', '.join(names)})") from None


def check_decision(decision: Decision | str, by: str, note: str | None) -> Decision:
    try:
        choice = Decision(decision)
    except ValueError:
        choice = None
    if choice is None or choice is Decision.EXPIRED:
        raise BadInput(f"a decision is approved, revised or skipped, not {decision!r}")
    if not by or not by.strip():
        raise BadInput("a decision must name who made it")
    check_name(by, "the decider's name")
    check_text(note, "the note", MAX_NOTE_CHARS)
    if choice is Decision.REVISED and not (note and note.strip()):
        raise BadInput("a revise decision needs a note")
    return choice


def refuse_decided(row: dict[str, Any]) -> None:
    if row["decision"] == Decision.EXPIRED:
        raise ApprovalExpired(f"approval {row['id']} of task {row['task_id']} expired at "
                              f"{human_time(row['decided_at'])}")
    if row["decision"] is not None:
        raise AlreadyDecided(
            f"approval {row['id']} of task {row['task_id']} was already {row['decision']} "
            f"by {row['decided_by']} at {human_time(row['decided_at'])}",
            decided_by=row["decided_by"], decision=row["decision"])


# Four-eyes: at most this many distinct people can be required to approve one request.
MAX_REQUIRED_APPROVALS = 10
INT_SETTINGS = {"max_running", "max_parked", "daily_new"}


PEOPLE_SETTINGS = {"approvers", "escalate_to"}
OPTIONAL_SETTINGS = {"remind_after_seconds", "escalate_after_seconds"}
MAX_PEOPLE = 100


def check_people(key: str, value: Any) -> None:
    """A list of person names (approvers may be None: everyone a channel lets in)."""
    if value is None and key == "approvers":
        return
    if not isinstance(value, list | tuple) or len(value) > MAX_PEOPLE:
        raise BadInput(f"{key} must be a list of at most {MAX_PEOPLE} person names")
    for name in value:
        check_name(name, f"a name in {key}")
        if not name:
            raise BadInput(f"{key} has an empty name")


def check_setting(key: str, value: Any) -> None:
    if key == "approval_groups":  # checked by store/groups.py's check_groups
        return
    if key == "signed_approvals":
        if not isinstance(value, bool):
            raise BadInput("signed_approvals must be true or false (on or off)")
        return
    if key in PEOPLE_SETTINGS:
        check_people(key, value)
        return
    if value is None and key in OPTIONAL_SETTINGS:
        return
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
    if key == "required_approvals" and value > MAX_REQUIRED_APPROVALS:
        raise BadInput(f"required_approvals must be at most {MAX_REQUIRED_APPROVALS}")


def person_key(name: str) -> str:
    """A person's name as every comparison sees it: trimmed and case-folded, so `alice`
    and ` ALICE` are one person (four-eyes, approvers, the requester, escalate_to)."""
    return name.strip().casefold()


def same_person(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and person_key(a) == person_key(b)


def is_requester(request: Any, by: str, enqueued_by: str | None = None) -> bool:
    """True when `by` asked for this: the task's requester recorded at enqueue
    (`enqueued_by`), or the one the request names (`requested_by`, an addition). That
    person's approve is recorded but does not count toward the approvals required."""
    named = request.get("requested_by") if isinstance(request, dict) else None
    return same_person(enqueued_by, by) or (isinstance(named, str) and same_person(named, by))


def check_json(value: Any, what: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """BadInput when jsonb cannot store `value` or it is past the limits: nested deeper than
    `max_json_depth`, over `max_json_bytes` as compact UTF-8 JSON, a NUL, NaN or Infinity,
    a whole number past MAX_INT_DIGITS digits, or a value JSON has no form for."""
    if value is None:  # JSON null: nothing to walk (a worker checks one per outcome)
        return
    json_text(value, what, limits)


def json_text(value: Any, what: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """`value` as compact JSON text, once check_json's rules hold (the text it measured, so
    a caller that sends it does not serialise the value a second time)."""
    chars = _walk(value, what, limits)
    # The walk counted every string's characters, a lower bound of the encoded size, so a
    # huge value is refused before it is serialised.
    if chars > limits.max_json_bytes:
        raise _too_big(what, chars, limits, at_least=True)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # A UTF-8 byte count above the limit needs at least limit/4 characters.
    if len(text) * 4 > limits.max_json_bytes and len(text.encode()) > limits.max_json_bytes:
        raise _too_big(what, len(text.encode()), limits)
    return text


def _too_big(what: str, size: int, limits: Limits, at_least: bool = False) -> BadInput:
    return BadInput(f"{what} is {'at least ' if at_least else ''}{size} bytes of JSON, over the "
                    f"limit of {limits.max_json_bytes} (max_json_bytes)")


# Values that need no walk of their own: a payload that is one object of these (most are)
# is checked key by key without the stack below. Exact types: a subclass takes the walk.
_FLAT = frozenset({str, int, float, bool, type(None)})


def _walk(value: Any, what: str, limits: Limits) -> int:
    """Check every node without recursion (a 10,000-deep value must not blow the stack);
    returns the characters of all strings and keys."""
    if type(value) is dict and limits.max_json_depth >= 1:
        flat = 0
        for key, child in value.items():
            if type(child) not in _FLAT:
                break
            flat += _check_scalar(key, what) + _check_scalar(child, what)
        else:
            return flat
    chars = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth > limits.max_json_depth:
                raise BadInput(f"{what} is nested deeper than {limits.max_json_depth} levels "
                               "(max_json_depth)")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in items:
                if isinstance(node, dict):
                    chars += _check_scalar(key, what)
                stack.append((child, depth + 1))
        else:
            chars += _check_scalar(node, what)
        if chars > limits.max_json_bytes:
            break
    return chars


def _check_scalar(node: Any, what: str) -> int:
    if isinstance(node, str):
        if "\x00" in node:
            raise BadInput(f"{what} holds a \\u0000 character, which PostgreSQL's jsonb "
                           "cannot store")
        if not node.isascii():
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise BadInput(f"{what} holds a lone surrogate (\\ud800-\\udfff), which is "
                               "not text") from None
        return len(node)
    if isinstance(node, bool) or node is None:
        return 0
    if isinstance(node, int):
        if abs(node) >= _INT_BOUND:
            raise BadInput(f"{what} holds a number of more than {MAX_INT_DIGITS} digits")
        return 0
    if isinstance(node, float):
        if not math.isfinite(node):
            raise BadInput(f"{what} holds NaN or Infinity, which JSON cannot store")
        return 0
    raise BadInput(f"{what} holds a {type(node).__name__}, which is not a JSON value")
