"""Frozen rows the API returns to a reader (Task, Approval, Attachment, Event, Capability,
TaskDetail) and their JSON; the machinery's own records are in work_models.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskqueue.store.states import Decision, Status

JSON = dict[str, Any]


def iso(value: datetime | None) -> str | None:
    """A timestamp as ISO 8601 (with its UTC offset), or None."""
    return value.isoformat() if value is not None else None


@dataclass(frozen=True)
class Attachment:
    """One file of evidence attached to an approval; `data` is loaded only on request."""

    id: int
    approval_id: int
    filename: str
    content_type: str
    size_bytes: int
    sha256: str
    data: bytes | None = None

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "filename": self.filename,
            "content_type": self.content_type,
            "size_bytes": self.size_bytes,
            "sha256": self.sha256,
        }


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")


def _waiting_for(approved: int, required: int) -> str:
    left = max(required - approved, 1)
    if left == 1:
        return f"a {_ORDINALS[min(approved, len(_ORDINALS) - 1)]} person"
    return f"{left} more people"


@dataclass(frozen=True)
class ApproverGroup:
    """A named group whose `min` distinct people must each approve a request."""

    name: str
    people: tuple[str, ...]
    min: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "people": list(self.people), "min": self.min}


def groups_missing(groups: Sequence[ApproverGroup], approvers: Iterable[str]) -> list[str]:
    """The groups whose minimum the distinct `approvers` (counted approves) cannot meet,
    each person filling one place in one group: a maximum bipartite matching of people to
    the groups' places, so alice in ops and finance never counts for both."""
    if not groups:
        return []
    people = sorted({_fold(a) for a in approvers})
    slots = [(i, k) for i, g in enumerate(groups) for k in range(g.min)]
    members = [{_fold(p) for p in g.people} for g in groups]
    taken: dict[int, str] = {}  # slot -> person

    def place(person: str, seen: set[int]) -> bool:
        for s, (group, _) in enumerate(slots):
            if s in seen or person not in members[group]:
                continue
            seen.add(s)
            if s not in taken or place(taken[s], seen):
                taken[s] = person
                return True
        return False

    for person in people:
        place(person, set())
    short = {slots[s][0] for s in range(len(slots)) if s not in taken}
    return [g.name for i, g in enumerate(groups) if i in short]


def _fold(name: str) -> str:
    return name.strip().casefold()


@dataclass(frozen=True)
class Vote:
    """One person's approve of a request (four-eyes); `counted` is False for the requester's
    own approve, recorded but not counted toward the approval's `required`."""

    by: str
    at: datetime
    counted: bool = True
    # Who typed it when the channel cannot prove the person (the CLI: `cli:USER@HOST`).
    via: str | None = None
    # Confirmed with the person's passkey (a WebAuthn assertion over this request).
    signed: bool = False

    def to_json(self) -> JSON:
        return {"by": self.by, "at": iso(self.at), "counted": self.counted, "via": self.via,
                "signed": self.signed}


@dataclass(frozen=True)
class Approval:
    """A question a task parked with, and the decision once someone (or the clock) made it."""

    id: int
    task_id: int
    question: str
    request: JSON
    created_at: datetime
    expires_at: datetime
    decision: Decision | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    note: str | None = None
    attachments: tuple[Attachment, ...] = ()
    required: int = 1
    approvals: tuple[Vote, ...] = ()
    # When the capability's reminder and escalation went out (None: not yet).
    escalated_at: datetime | None = None
    reminded_at: datetime | None = None
    # Who typed the decision when the channel cannot prove the person (the CLI).
    decided_via: str | None = None
    # The capability's approver groups when the task parked (issue 39).
    groups: tuple[ApproverGroup, ...] = ()

    @property
    def is_open(self) -> bool:
        return self.decision is None

    @property
    def approved_count(self) -> int:
        """How many distinct people's approves count toward `required` so far."""
        return sum(1 for v in self.approvals if v.counted)

    def missing_groups(self) -> list[str]:
        """The approver groups whose minimum the counted approves do not meet yet."""
        return groups_missing(self.groups, [v.by for v in self.approvals if v.counted])

    def progress(self) -> str | None:
        """Four-eyes progress of an open approval that has approves, e.g. "Approved by alice
        (1 of 2): waiting for a second person", or with groups "...: waiting for finance";
        None when there is nothing to show."""
        if not self.is_open or not self.approvals:
            return None
        counted = [v.by for v in self.approvals if v.counted]
        own = [v.by for v in self.approvals if not v.counted]
        names = ", ".join(counted) if counted else "nobody yet"
        text = f"Approved by {names} ({len(counted)} of {self.required})"
        if own:
            text += f"; {', '.join(own)} asked for it, so their approve does not count"
        if missing := self.missing_groups():
            return f"{text}: waiting for {' and '.join(missing)}"
        return f"{text}: waiting for {_waiting_for(len(counted), self.required)}"

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "question": self.question,
            "request": self.request,
            "decision": self.decision.value if self.decision else None,
            "note": self.note,
            "decided_by": self.decided_by,
            "decided_at": iso(self.decided_at),
            "created_at": iso(self.created_at),
            "expires_at": iso(self.expires_at),
            "attachments": [a.to_json() for a in self.attachments],
            "required": self.required,
            "approvals": [v.to_json() for v in self.approvals],
            "reminded_at": iso(self.reminded_at),
            "escalated_at": iso(self.escalated_at),
            "decided_via": self.decided_via,
            "groups": [g.to_json() for g in self.groups],
        }


@dataclass(frozen=True)
class Task:
    """A unit of work. `claim` is the token of the current claim while running."""

    id: int
    capability: str
    status: Status
    priority: int
    payload: JSON
    state: JSON
    result: JSON | None
    last_error: str | None
    attempts: int
    max_attempts: int
    run_after: datetime
    dedupe_key: str | None
    worker: str | None
    claim: str | None
    lease_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    first_claimed_at: datetime | None
    finished_at: datetime | None
    approval: Approval | None = None
    # Set on a task just returned by a claim: the status it was claimed from.
    claimed_from: Status | None = None
    # Who asked for it, recorded by the core at enqueue (a person, `producer:NAME`, `cli`):
    # their own approve never counts.
    requested_by: str | None = None

    @property
    def decision(self) -> Decision | None:
        """The latest approval's decision: what a resumed workload acts on."""
        return self.approval.decision if self.approval else None

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "capability": self.capability,
            "status": self.status.value,
            "priority": self.priority,
            "payload": self.payload,
            "state": self.state,
            "result": self.result,
            "last_error": self.last_error,
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "run_after": iso(self.run_after),
            "dedupe_key": self.dedupe_key,
            "worker": self.worker,
            "claim": self.claim,
            "lease_expires_at": iso(self.lease_expires_at),
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "first_claimed_at": iso(self.first_claimed_at),
            "finished_at": iso(self.finished_at),
            "approval": self.approval.to_json() if self.approval else None,
            "requested_by": self.requested_by,
        }


@dataclass(frozen=True)
class Event:
    """One row of a task's audit log."""

    id: int
    task_id: int
    at: datetime
    kind: str
    actor: str | None
    detail: JSON

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "at": iso(self.at),
            "kind": self.kind,
            "actor": self.actor,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Capability:
    """Per-capability settings. None means no cap."""

    capability: str
    max_running: int | None = None
    max_parked: int | None = None
    daily_new: int | None = None
    day_timezone: str = "UTC"
    lease_seconds: int = 300
    approval_ttl_seconds: int = 48 * 3600
    max_attempts: int = 3
    retry_base_seconds: int = 30
    required_approvals: int = 1
    # Four-eyes policy: who may decide (None: everyone a channel lets in), when to remind
    # and when to escalate an unanswered approval, and to whom.
    approvers: tuple[str, ...] | None = None
    remind_after_seconds: int | None = None
    escalate_after_seconds: int | None = None
    escalate_to: tuple[str, ...] = ()
    # Approver groups: each group's minimum of distinct people must approve (issue 39).
    approval_groups: tuple[ApproverGroup, ...] = ()
    # An approve counts only when confirmed with the person's passkey (issue 39).
    signed_approvals: bool = False

    def may_decide(self, person: str) -> bool:
        """Whether `person` may decide this capability's approvals."""
        if self.approvers is None:
            return True
        key = person.strip().casefold()
        return any(key == a.strip().casefold() for a in self.approvers)

    def to_json(self) -> JSON:
        return {
            "capability": self.capability,
            "max_running": self.max_running,
            "max_parked": self.max_parked,
            "daily_new": self.daily_new,
            "day_timezone": self.day_timezone,
            "lease_seconds": self.lease_seconds,
            "approval_ttl_seconds": self.approval_ttl_seconds,
            "max_attempts": self.max_attempts,
            "retry_base_seconds": self.retry_base_seconds,
            "required_approvals": self.required_approvals,
            "approvers": list(self.approvers) if self.approvers is not None else None,
            "remind_after_seconds": self.remind_after_seconds,
            "escalate_after_seconds": self.escalate_after_seconds,
            "escalate_to": list(self.escalate_to),
            "approval_groups": {g.name: {"people": list(g.people), "min": g.min}
                                for g in self.approval_groups} or None,
            "signed_approvals": self.signed_approvals,
        }



@dataclass(frozen=True)
class TaskDetail:
    """A task with all its approvals (oldest first) and its events: what `show` prints."""

    task: Task
    approvals: tuple[Approval, ...] = field(default_factory=tuple)
    events: tuple[Event, ...] = field(default_factory=tuple)

    def to_json(self) -> JSON:
        doc = self.task.to_json()
        doc["approvals"] = [a.to_json() for a in self.approvals]
        doc["events"] = [e.to_json() for e in self.events]
        return doc
