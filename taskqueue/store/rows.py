"""Turns database rows (dicts) into the frozen models, and checks attachments before a park."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from taskqueue.errors import AttachmentTooLarge, BadInput
from taskqueue.store.groups import groups_from_json
from taskqueue.store.models import (
    Approval,
    Attachment,
    Capability,
    Event,
    Task,
    Vote,
)
from taskqueue.store.states import Decision, Status

if TYPE_CHECKING:
    from taskqueue.store.work_models import NewAttachment

Row = Mapping[str, Any]


_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"%PDF-", "application/pdf"),
)


def task_from_row(row: Row, approval: Approval | None = None) -> Task:
    token = row.get("claim_token")
    return Task(
        id=row["id"],
        capability=row["capability"],
        status=Status(row["status"]),
        priority=row["priority"],
        payload=row["payload"],
        state=row["state"],
        result=row["result"],
        last_error=row["last_error"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        run_after=row["run_after"],
        dedupe_key=row["dedupe_key"],
        worker=row["worker"],
        claim=str(token) if token is not None else None,
        lease_expires_at=row["lease_expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        first_claimed_at=row["first_claimed_at"],
        finished_at=row["finished_at"],
        approval=approval,
        claimed_from=Status(row["old_status"]) if row.get("old_status") else None,
        requested_by=row.get("enqueued_by"),
    )


def claimed_from_rows(found: Iterable[Row]) -> list[Task]:
    """The tasks of a claim's rows (task columns, then its latest approval as ap_*)."""
    return [task_from_row(r, _claimed_approval(r)) for r in found]


def _claimed_approval(row: Row) -> Approval | None:
    if row["ap_id"] is None:
        return None
    fields = {k[3:]: v for k, v in row.items() if k.startswith("ap_")}
    files = [attachment_from_row(f) for f in row["ap_files"] or ()]
    # The votes arrive as JSON (one column per claimed row): their times as ISO text.
    votes = [v | {"decided_at": datetime.fromisoformat(v["decided_at"])}
             for v in row.get("ap_votes") or ()]
    return approval_from_row(fields | {"task_id": row["id"]}, files, votes)


def approval_from_row(row: Row, attachments: Iterable[Attachment] = (),
                      votes: Iterable[Row] = ()) -> Approval:
    decision = row["decision"]
    return Approval(
        id=row["id"],
        task_id=row["task_id"],
        question=row["question"],
        request=row["request"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        decision=Decision(decision) if decision is not None else None,
        decided_by=row["decided_by"],
        decided_at=row["decided_at"],
        note=row["note"],
        attachments=tuple(attachments),
        required=row.get("required") or 1,
        approvals=tuple(Vote(v["person"], v["decided_at"], v["counts"], v.get("via"),
                             bool(v.get("signed") or v.get("credential_id"))) for v in votes),
        escalated_at=row.get("escalated_at"),
        reminded_at=row.get("reminded_at"),
        decided_via=row.get("decided_via"),
        groups=groups_from_json(row.get("groups")),
    )


def attachment_from_row(row: Row) -> Attachment:
    return Attachment(
        id=row["id"],
        approval_id=row["approval_id"],
        filename=row["filename"],
        content_type=row["content_type"],
        size_bytes=row["size_bytes"],
        sha256=row["sha256"],
        data=bytes(row["data"]) if row.get("data") is not None else None,
    )


def event_from_row(row: Row) -> Event:
    return Event(
        id=row["id"],
        task_id=row["task_id"],
        at=row["at"],
        kind=row["kind"],
        actor=row["actor"],
        detail=row["detail"],
    )


def capability_from_row(row: Row) -> Capability:
    return Capability(
        capability=row["capability"],
        max_running=row["max_running"],
        max_parked=row["max_parked"],
        daily_new=row["daily_new"],
        day_timezone=row["day_timezone"],
        lease_seconds=row["lease_seconds"],
        approval_ttl_seconds=row["approval_ttl_seconds"],
        max_attempts=row["max_attempts"],
        retry_base_seconds=row["retry_base_seconds"],
        required_approvals=row.get("required_approvals") or 1,
        approvers=tuple(row["approvers"]) if row.get("approvers") is not None else None,
        remind_after_seconds=row.get("remind_after_seconds"),
        escalate_after_seconds=row.get("escalate_after_seconds"),
        escalate_to=tuple(row.get("escalate_to") or ()),
        approval_groups=groups_from_json(row.get("approval_groups")),
        signed_approvals=bool(row.get("signed_approvals")),
    )


def sniff_content_type(data: bytes) -> str | None:
    """PNG, JPEG, PDF or UTF-8 text by their bytes; None for anything else."""
    for signature, content_type in _SIGNATURES:
        if data.startswith(signature):
            return content_type
    if b"\x00" in data:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "text/plain"


MAX_ATTACHMENT_NAME_BYTES = 255


def check_attachment_name(name: str) -> None:
    """BadInput unless `name` is a plain file name: no folder part (/ or \\), not . or ..,
    no control, format or bidi character (NUL, newline, escape codes), at most 255 bytes.
    Names are refused rather than changed, so what a person sees is what the worker sent."""
    shown = repr(name[:60] + ("…" if len(name) > 60 else ""))
    reason = (
        "is empty" if not name.strip()
        else "is . or .." if name in (".", "..")
        else "has a folder part (/ or \\)" if "/" in name or "\\" in name
        else "holds a control character" if any(
            unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in name)
        else f"is over {MAX_ATTACHMENT_NAME_BYTES} bytes" if len(
            name.encode("utf-8", "surrogatepass")) > MAX_ATTACHMENT_NAME_BYTES
        else "is not text" if not _encodes(name)
        else None)
    if reason is not None:
        raise BadInput(f"attachment name {shown} is not a plain file name: it {reason}")


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_attachment(item: NewAttachment, limit: int) -> dict[str, Any]:
    """The attachment's row values, or BadInput naming the file when it cannot be stored."""
    check_attachment_name(item.filename)
    if len(item.data) > limit:
        raise AttachmentTooLarge(
            f"attachment {item.filename} is {len(item.data)} bytes, over the limit of {limit}"
        )
    sniffed = sniff_content_type(item.data)
    if sniffed is None:
        raise BadInput(f"attachment {item.filename} is not PNG, JPEG, PDF or UTF-8 text")
    return {
        "filename": item.filename,
        "content_type": item.content_type or sniffed,
        "size_bytes": len(item.data),
        "sha256": hashlib.sha256(item.data).hexdigest(),
        "data": item.data,
    }

