"""Rows as frozen models and their JSON: the keys the CLI contract promises."""

from __future__ import annotations

import dataclasses

import pytest

from taskqueue import Decision, Status, TaskQueue
from taskqueue.store.rows import sniff_content_type

from ..factories import PDF, PNG, parked

TASK_KEYS = {"id", "capability", "status", "priority", "payload", "state", "result", "attempts",
             "max_attempts", "worker", "claim", "lease_expires_at", "created_at", "updated_at",
             "last_error", "approval"}
APPROVAL_KEYS = {"id", "question", "request", "decision", "note", "decided_by", "decided_at",
                 "expires_at"}


async def test_task_json_has_the_contract_keys_and_its_latest_approval(queue: TaskQueue) -> None:
    task, _ = await parked(queue, request={"draft": "x"})
    await queue.approval_decide_for_task(task.id, Decision.REVISED, "alice", note="redo")
    doc = (await queue.task_get(task.id)).to_json()
    assert set(doc) >= TASK_KEYS and doc["status"] == "approved"
    assert set(doc["approval"]) >= APPROVAL_KEYS
    assert (doc["approval"]["decision"], doc["approval"]["note"]) == ("revised", "redo")
    detail = (await queue.task_detail(task.id)).to_json()
    assert len(detail["approvals"]) == 1 and detail["events"][0]["kind"] == "enqueued"


async def test_rows_are_frozen(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.status = Status.RUNNING  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        approval.decision = Decision.APPROVED  # type: ignore[misc]


@pytest.mark.parametrize(("data", "expected"), [
    (PNG, "image/png"),
    (PDF, "application/pdf"),
    (b"\xff\xd8\xff\xe0jpeg", "image/jpeg"),
    ("Grüße\n".encode(), "text/plain"),
    (b"", "text/plain"),
    (b"a\x00b", None),
    (b"\xff\xfe\xfd", None),
])
def test_sniff_content_type_knows_png_pdf_jpeg_and_text(data: bytes, expected: str | None) -> None:
    assert sniff_content_type(data) == expected
