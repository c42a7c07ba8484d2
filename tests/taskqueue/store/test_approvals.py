"""Park and decide: a task stops at a question, a person answers once, the task resumes or ends."""

from __future__ import annotations

import hashlib

import pytest

from taskqueue import (
    AlreadyDecided,
    ApprovalExpired,
    ApprovalNotFound,
    AttachmentTooLarge,
    BadInput,
    Conflict,
    Decision,
    NewAttachment,
    NotFound,
    Reaper,
    Status,
    TaskNotFound,
    TaskQueue,
)

from ..factories import CAP, PDF, PNG, backdate, claimed, enqueue, in_threads, parked, sql, value


async def _hours_to_expiry(queue: TaskQueue, approval_id: int) -> float:
    return float(await value(queue, "SELECT extract(epoch FROM expires_at - created_at) / 3600 "
                                    "FROM approvals WHERE id = %s", approval_id))


async def test_park_stops_the_task_and_drops_its_lease(queue: TaskQueue) -> None:
    task, approval = await parked(queue, request={"draft": "Dear ..."}, state={"step": 2})
    stored = await queue.task_get(task.id)
    assert stored.status is Status.NEEDS_APPROVAL and stored.state == {"step": 2}
    assert stored.worker is None and stored.claim is None and stored.lease_expires_at is None
    assert stored.approval == approval and approval.is_open
    assert (approval.task_id, approval.question, approval.request) == (
        task.id, "Send it?", {"draft": "Dear ..."})
    event = (await queue.task_detail(task.id)).events[-1]
    assert (event.kind, event.actor, event.detail["approval_id"]) == ("parked", "w1", approval.id)
    assert await queue.task_claim(CAP, "w2") is None


async def test_park_expiry_defaults_to_48_hours(queue: TaskQueue) -> None:
    _, approval = await parked(queue)
    assert await _hours_to_expiry(queue, approval.id) == pytest.approx(48)


async def test_park_expiry_comes_from_the_call_then_the_capability(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approval_ttl_seconds=3600)
    _, by_capability = await parked(queue)
    _, by_call = await parked(queue, expires_in=600)
    assert await _hours_to_expiry(queue, by_capability.id) == pytest.approx(1)
    assert await _hours_to_expiry(queue, by_call.id) == pytest.approx(600 / 3600)


async def test_park_stores_attachments_with_their_hash_and_size(queue: TaskQueue) -> None:
    files = [NewAttachment("shot.png", PNG), NewAttachment("cv.pdf", PDF),
             NewAttachment("letter.txt", "Dear Ms Müller".encode())]
    _, approval = await parked(queue, attachments=files)
    stored = {a.filename: a for a in approval.attachments}
    assert {n: a.content_type for n, a in stored.items()} == {
        "shot.png": "image/png", "cv.pdf": "application/pdf", "letter.txt": "text/plain"}
    for f in files:
        meta = stored[f.filename]
        assert meta.sha256 == hashlib.sha256(f.data).hexdigest()
        assert meta.size_bytes == len(f.data)
        assert (await queue.attachment_get(meta.id)).data == f.data
    assert (await queue.approval_get(approval.id)).attachments == approval.attachments


async def test_park_with_an_attachment_over_the_limit_writes_nothing(queue: TaskQueue) -> None:
    small = TaskQueue(queue.pool, max_attachment_bytes=10)
    task = await claimed(small)
    with pytest.raises(AttachmentTooLarge, match=r"big\.txt.*11 bytes.*limit of 10"):
        await small.task_park(task.id, "w1", "Go?", claim=task.claim,
                              attachments=[NewAttachment("ok.txt", b"tiny"),
                                           NewAttachment("big.txt", b"x" * 11)])
    assert (await queue.task_get(task.id)).status is Status.RUNNING
    assert await value(queue, "SELECT count(*) FROM approvals") == 0
    assert await value(queue, "SELECT count(*) FROM approval_attachments") == 0
    assert [e.kind for e in (await queue.task_detail(task.id)).events] == ["enqueued", "claimed"]
    await small.task_park(task.id, "w1", "Go?", claim=task.claim,
                          attachments=[NewAttachment("ok.txt", b"x" * 10)])


@pytest.mark.parametrize(("name", "data", "match"), [
    ("blob.bin", b"\x00\x01\x02binary", "not PNG"),
    ("latin1.txt", "Müller".encode("latin-1"), "not PNG"),
    ("../etc/passwd", b"text", "plain file name: it has a folder part"),
    ("", b"text", "plain file name: it is empty"),
    (".", b"text", "it is . or .."),
    ("..", b"text", "it is . or .."),
    ("C:\\evil.txt", b"text", "folder part"),
    ("a\x00b.txt", b"text", "control character"),
    ("line\nbreak.txt", b"text", "control character"),
    ("\x1b[31mred.txt", b"text", "control character"),
    ("txt.\u202eexe", b"text", "control character"),
    ("é" * 128, b"text", "over 255 bytes"),
    ("\ud800.txt", b"text", "not text"),
])
async def test_park_refuses_an_unsupported_attachment(offline: TaskQueue, name: str,
                                                      data: bytes, match: str) -> None:
    with pytest.raises(BadInput, match=match):
        await offline.task_park(1, "w1", "Go?", attachments=[NewAttachment(name, data)])


async def test_plain_attachment_names_up_to_255_bytes_are_stored(queue: TaskQueue) -> None:
    names = ["é" * 127 + ".", "report v2 (final).txt", "..hidden", "a..b.txt", "Müller.txt"]
    _, approval = await parked(queue, attachments=[NewAttachment(n, b"x") for n in names])
    assert sorted(a.filename for a in approval.attachments) == sorted(names)


@pytest.mark.parametrize("decision", [Decision.APPROVED, Decision.REVISED])
async def test_approve_or_revise_resumes_the_task_ahead_of_new_work(
        queue: TaskQueue, decision: Decision) -> None:
    task, approval = await parked(queue, state={"step": 2})
    newer = await enqueue(queue, priority=9)
    decided = await queue.approval_decide_for_task(task.id, decision, "alice", note="shorter")
    assert (decided.id, decided.decision, decided.decided_by, decided.note) == (
        approval.id, decision, "alice", "shorter")
    assert decided.decided_at is not None
    assert (await queue.task_get(task.id)).status is Status.APPROVED
    resumed = await queue.task_claim(CAP, "w2")
    assert resumed is not None and resumed.id == task.id and resumed.state == {"step": 2}
    assert resumed.decision is decision and resumed.approval is not None
    assert resumed.approval.note == "shorter" and resumed.attempts == 0
    assert resumed.first_claimed_at == task.first_claimed_at
    follower = await queue.task_claim(CAP, "w2")
    assert follower is not None and follower.id == newer


async def test_skip_ends_the_task_as_skipped(queue: TaskQueue) -> None:
    task, _ = await parked(queue)
    decided = await queue.approval_decide_for_task(task.id, "skipped", "bob", note="not now")
    assert decided.decision is Decision.SKIPPED
    ended = await queue.task_get(task.id)
    assert ended.status is Status.SKIPPED and ended.finished_at is not None
    assert await queue.task_claim(CAP, "w1") is None


async def test_decide_by_approval_id_records_the_decision(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    decided = await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert decided.decision is Decision.APPROVED and decided.note is None
    assert (await queue.task_get(task.id)).status is Status.APPROVED


async def test_decisions_write_decided_events(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    await queue.approval_decide_for_task(task.id, Decision.REVISED, "alice", note="redo")
    event = (await queue.task_detail(task.id)).events[-1]
    assert (event.kind, event.actor) == ("decided", "alice")
    assert event.detail == {"from": "needs_approval", "to": "approved", "decision": "revised",
                            "approval_id": approval.id, "note": "redo"}


async def test_revise_without_a_note_is_bad_input_and_decides_nothing(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    for note in (None, "", "  "):
        with pytest.raises(BadInput, match="note"):
            await queue.approval_decide_for_task(task.id, Decision.REVISED, "alice", note=note)
    assert (await queue.approval_get(approval.id)).is_open
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL


@pytest.mark.parametrize(("decision", "by", "match"), [
    ("expired", "alice", "decision"),
    ("maybe", "alice", "decision"),
    ("approved", "", "who"),
])
async def test_decide_refuses_bad_input(queue: TaskQueue, decision: str, by: str,
                                        match: str) -> None:
    task, _ = await parked(queue)
    with pytest.raises(BadInput, match=match):
        await queue.approval_decide_for_task(task.id, decision, by)
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL


async def test_a_second_decision_is_refused_naming_the_first_decider(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    for decision in (Decision.SKIPPED, Decision.APPROVED):
        with pytest.raises(AlreadyDecided, match="already approved by alice") as err:
            await queue.approval_decide(approval.id, decision, "bob")
        assert (err.value.decided_by, err.value.decision) == ("alice", "approved")
    stored = await queue.approval_get(approval.id)
    assert (stored.decision, stored.decided_by) == (Decision.APPROVED, "alice")
    assert await value(queue, "SELECT count(*) FROM task_events WHERE kind = 'decided'") == 1


def test_concurrent_decisions_let_exactly_one_win(dsn: str) -> None:
    async def setup(q: TaskQueue, i: int) -> int:
        return (await parked(q))[1].id

    [approval_id] = in_threads(1, dsn, setup)

    async def decide(q: TaskQueue, i: int) -> str:
        decision = Decision.APPROVED if i % 2 else Decision.SKIPPED
        try:
            await q.approval_decide(approval_id, decision, f"person{i}")
        except AlreadyDecided as exc:
            return f"refused:{exc.decided_by}"
        return f"won:person{i}"

    outcomes = in_threads(8, dsn, decide)
    winners = [o for o in outcomes if o.startswith("won:")]
    assert len(winners) == 1
    winner = winners[0].removeprefix("won:")
    assert sorted(outcomes) == sorted([f"won:{winner}"] + [f"refused:{winner}"] * 7)


async def test_decision_after_expiry_expires_the_task(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    await backdate(queue, "approvals", "expires_at", "1 s", "id = %s", approval.id)
    with pytest.raises(ApprovalExpired, match=f"approval {approval.id}"):
        await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    assert (await queue.task_get(task.id)).status is Status.EXPIRED
    stored = await queue.approval_get(approval.id)
    assert stored.decision is Decision.EXPIRED and stored.decided_by is None
    with pytest.raises(ApprovalExpired):
        await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    kinds = [e.kind for e in (await queue.task_detail(task.id)).events]
    assert kinds[-1] == "expired" and "decided" not in kinds


async def test_deciding_a_cancelled_task_is_a_conflict(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    await queue.task_cancel(task.id)
    with pytest.raises(Conflict, match="cancelled"):
        await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    assert (await queue.approval_get(approval.id)).is_open
    assert (await queue.task_get(task.id)).status is Status.CANCELLED


async def test_deciding_a_task_without_an_approval_is_a_conflict(queue: TaskQueue) -> None:
    task_id = await enqueue(queue)
    with pytest.raises(Conflict, match="no approval"):
        await queue.approval_decide_for_task(task_id, Decision.APPROVED, "alice")
    with pytest.raises(TaskNotFound):
        await queue.approval_decide_for_task(999_999, Decision.APPROVED, "alice")
    with pytest.raises(ApprovalNotFound, match="no such approval"):
        await queue.approval_decide(999_999, Decision.APPROVED, "alice")
    with pytest.raises(ApprovalNotFound, match="no such approval"):
        await queue.approval_get(999_999)
    with pytest.raises(NotFound, match="no such attachment"):
        await queue.attachment_get(999_999)


async def test_a_task_may_park_again_and_the_latest_approval_is_decided(queue: TaskQueue) -> None:
    task, first = await parked(queue)
    await queue.approval_decide_for_task(task.id, Decision.REVISED, "alice", note="again")
    resumed = await queue.task_claim(CAP, "w2")
    assert resumed is not None
    second = await queue.task_park(task.id, "w2", "Now?", claim=resumed.claim)
    assert (await queue.task_get(task.id)).decision is None
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    detail = await queue.task_detail(task.id)
    assert [(a.id, a.decision) for a in detail.approvals] == [
        (first.id, Decision.REVISED), (second.id, Decision.APPROVED)]
    assert detail.task.approval is not None and detail.task.approval.id == second.id


async def test_open_approvals_are_listed_oldest_first(queue: TaskQueue) -> None:
    first_task, _ = await parked(queue)
    _, second = await parked(queue)
    _, third = await parked(queue)
    await queue.approval_decide_for_task(first_task.id, Decision.SKIPPED, "alice")
    assert [a.id for a in await queue.approval_list_open()] == [second.id, third.id]
    await sql(queue, "UPDATE tasks SET status = 'cancelled' WHERE id = %s", third.task_id)
    assert [a.id for a in await queue.approval_list_open()] == [second.id]


async def test_an_approval_left_open_by_cancel_and_retry_is_superseded(queue: TaskQueue) -> None:
    task, first = await parked(queue)
    await queue.task_cancel(task.id)
    await queue.task_retry(task.id)
    again = await queue.task_claim(CAP, "w2")
    assert again is not None
    second = await queue.task_park(task.id, "w2", "Second?", claim=again.claim)
    assert [a.id for a in await queue.approval_list_open()] == [second.id]
    with pytest.raises(Conflict, match="superseded"):
        await queue.approval_decide(first.id, Decision.APPROVED, "alice")
    # The old question's expiry does not end the task parked at the new one.
    await backdate(queue, "approvals", "expires_at", "1 s", "id = %s", first.id)
    assert (await Reaper(queue).run_once()).expired == 0
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL
    await queue.approval_decide(second.id, Decision.APPROVED, "alice")
    assert (await queue.task_get(task.id)).status is Status.APPROVED
