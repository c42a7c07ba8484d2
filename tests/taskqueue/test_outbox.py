"""The outbox's queries: only a task's current question is sent; a superseded one is closed."""

from __future__ import annotations

from taskqueue import Approval, TaskQueue


async def _park(queue: TaskQueue, task_id: int, question: str) -> Approval:
    task = await queue.task_claim("jobs", "w1")
    assert task is not None and task.id == task_id
    return await queue.task_park(task_id, "w1", question, claim=task.claim)


async def test_an_unsent_question_superseded_by_a_new_park_is_never_sent(
        queue: TaskQueue) -> None:
    task_id = (await queue.task_enqueue("jobs", {})).id
    old = await _park(queue, task_id, "First question?")
    await queue.task_cancel(task_id)
    await queue.task_retry(task_id)
    new = await _park(queue, task_id, "Second question?")
    claimed = await queue.outbox_claim("sender-1", limit=10)
    assert [m.approval_id for m in claimed] == [new.id]
    assert old.id != new.id


async def test_a_sent_question_superseded_by_a_new_park_gets_closed(queue: TaskQueue) -> None:
    task_id = (await queue.task_enqueue("jobs", {})).id
    old = await _park(queue, task_id, "First question?")
    [claimed] = await queue.outbox_claim("sender-1")
    await queue.outbox_mark_sent(claimed.approval_id, "sender-1", chat_id=42, message_id=7)
    assert await queue.outbox_claim_closing("sender-1") == []
    await queue.task_cancel(task_id)
    await queue.task_retry(task_id)
    await _park(queue, task_id, "Second question?")
    closing = await queue.outbox_claim_closing("sender-1")
    assert [m.approval_id for m in closing] == [old.id]
