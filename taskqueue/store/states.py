"""Task statuses and approval decisions, with who moves a task in and out of each."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A task's status. Each comment says which call moves a task in, and which out."""

    # In: enqueue, release, a retryable fail, the reaper (lapsed lease), retry.
    # Out: claim (running), cancel.
    PENDING = "pending"
    # In: claim. Out: complete, release, park, fail, the reaper, cancel.
    RUNNING = "running"
    # In: park, or an ask (a request from outside a worker is born here). Out: a
    # decision (approved, skipped; succeeded for an asked request), the reaper's expiry,
    # cancel.
    NEEDS_APPROVAL = "needs_approval"
    # In: an approve or revise decision ("a human answered"). Out: claim (running,
    # ahead of pending work), cancel.
    APPROVED = "approved"
    # In: complete; an approve of an asked request. Out: none (final).
    SUCCEEDED = "succeeded"
    # In: fail without retry or past max_attempts; the reaper past max_attempts.
    # Out: retry (pending). These are the dead letters.
    FAILED = "failed"
    # In: a skip decision. Out: none (final).
    SKIPPED = "skipped"
    # In: the reaper, for an approval unanswered past its expiry. Out: retry.
    EXPIRED = "expired"
    # In: cancel. Out: retry.
    CANCELLED = "cancelled"


class Decision(StrEnum):
    """What a person (or the clock) decided on an approval."""

    APPROVED = "approved"
    REVISED = "revised"
    SKIPPED = "skipped"
    EXPIRED = "expired"


CLAIMABLE = frozenset({Status.PENDING, Status.APPROVED})
UNFINISHED = frozenset({Status.PENDING, Status.RUNNING, Status.NEEDS_APPROVAL, Status.APPROVED})
FINISHED = frozenset(Status) - UNFINISHED
RETRYABLE = frozenset({Status.FAILED, Status.EXPIRED, Status.CANCELLED})

# Every transition the API makes, keyed by the call (or service) that makes it.
TRANSITIONS: dict[str, frozenset[tuple[Status, Status]]] = {
    "claim": frozenset({(Status.PENDING, Status.RUNNING), (Status.APPROVED, Status.RUNNING)}),
    "release": frozenset({(Status.RUNNING, Status.PENDING)}),
    "park": frozenset({(Status.RUNNING, Status.NEEDS_APPROVAL)}),
    "complete": frozenset({(Status.RUNNING, Status.SUCCEEDED)}),
    "fail": frozenset({(Status.RUNNING, Status.PENDING), (Status.RUNNING, Status.FAILED)}),
    # A request asked from outside a worker ends at its decision (succeeded or skipped).
    "decide": frozenset(
        {(Status.NEEDS_APPROVAL, Status.APPROVED), (Status.NEEDS_APPROVAL, Status.SKIPPED),
         (Status.NEEDS_APPROVAL, Status.SUCCEEDED)}
    ),
    "reap": frozenset(
        {
            (Status.RUNNING, Status.PENDING),
            (Status.RUNNING, Status.FAILED),
            (Status.NEEDS_APPROVAL, Status.EXPIRED),
        }
    ),
    "retry": frozenset((s, Status.PENDING) for s in RETRYABLE),
    "cancel": frozenset((s, Status.CANCELLED) for s in UNFINISHED),
}


def allowed(call: str, old: Status, new: Status) -> bool:
    """Whether `call` may move a task from `old` to `new`."""
    return (old, new) in TRANSITIONS.get(call, frozenset())
