"""The records of the queue's machinery: what a producer or a worker hands the queue
(NewTask, NewAttachment), what an enqueue answers (Enqueued), a producer's run, a
notification as a channel claims it, and a gated action with what its gate reads.

Apart from models.py (what a person reads: tasks, approvals, votes, events, capabilities)
so that a command that only reads builds none of these: each frozen dataclass costs an
import about half a millisecond (issue 44's CLI start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskqueue.store.models import JSON, ApproverGroup, iso
from taskqueue.store.states import Decision


@dataclass(frozen=True)
class NewTask:
    """One task of a batch enqueue."""

    payload: JSON
    priority: int = 0
    dedupe_key: str | None = None
    delay: float = 0
    max_attempts: int | None = None


@dataclass(frozen=True)
class NewAttachment:
    """A file to attach when parking: its name, bytes and (optionally) declared type."""

    filename: str
    data: bytes
    content_type: str | None = None


@dataclass(frozen=True)
class Enqueued:
    """The id of an enqueued task; `created` is False when a dedupe key matched."""

    id: int
    created: bool


@dataclass(frozen=True)
class ProducerRun:
    """One producer's run for one period; `finished_at` None while it runs."""

    id: int
    capability: str
    producer: str
    period: str
    runner: str
    started_at: datetime
    finished_at: datetime | None = None
    created: int | None = None
    existing: int | None = None
    report: JSON | None = None


@dataclass(frozen=True)
class Notification:
    """Something owed to people, as one channel claimed it for delivery.

    `kind` is approval_request, approval_progress (a four-eyes approve short of the count),
    approval_closed, alert or message; `settled` is True for
    a request whose question was answered (or superseded) before it went out, which the
    channel marks delivered without showing; `redelivery` is True when the channel
    delivered it before and was asked to show it again."""

    id: int
    kind: str
    channel: str
    task_id: int | None
    approval_id: int | None
    body: JSON
    created_at: datetime
    attempts: int = 0
    last_error: str | None = None
    settled: bool = False
    redelivery: bool = False


@dataclass(frozen=True)
class GatedAction:
    """The action one approve permitted (taskqueue.Gate): its started marker, the idempotency
    key handed to it, and, once settled, its result (`settled_by` acted or verified)."""

    approval_id: int
    task_id: int
    kind: str
    fingerprint: str
    key: str
    approved_by: str
    detail: JSON
    worker: str
    claim: str
    attempts: int
    started_at: datetime
    result: JSON | None = None
    settled_by: str | None = None
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    def to_json(self) -> JSON:
        return {
            "approval_id": self.approval_id, "task_id": self.task_id, "kind": self.kind,
            "fingerprint": self.fingerprint, "key": self.key, "approved_by": self.approved_by,
            "detail": self.detail,
            "worker": self.worker, "attempts": self.attempts,
            "started_at": iso(self.started_at), "result": self.result,
            "settled_by": self.settled_by, "finished_at": iso(self.finished_at),
        }


@dataclass(frozen=True)
class GateView:
    """What a gate reads right before acting, in one snapshot: the task's status and claim,
    its latest approval (None: it never parked) and that approval's action (None: not started)."""

    task_id: int
    status: str
    worker: str | None
    claim: str | None
    approval_id: int | None
    decision: Decision | None
    decided_by: str | None
    request: JSON
    action: GatedAction | None
    required: int = 1
    approvers: tuple[str, ...] = ()
    groups: tuple[ApproverGroup, ...] = ()
    # Signed approvals: the capability asks for them, and who among the counted approvers
    # has a passkey signature that verifies over this request (read right before acting).
    signed_required: bool = False
    signed_by: tuple[str, ...] = ()
