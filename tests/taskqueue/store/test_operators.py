"""Operator calls: retry puts a dead letter back to pending, cancel stops unfinished work."""

from __future__ import annotations

import pytest

from taskqueue import BadInput, Conflict, Status, TaskNotFound, TaskQueue

from ..factories import CAP, claimed, enqueue, task_in


async def test_retry_puts_a_failed_task_back_to_pending_with_attempts_reset(
        queue: TaskQueue) -> None:
    task = await claimed(queue, max_attempts=1)
    await queue.task_fail(task.id, "w1", "boom", claim=task.claim)
    assert [t.id for t in await queue.task_list(status="failed")] == [task.id]
    retried = await queue.task_retry(task.id, actor="ops")
    assert (retried.status, retried.attempts) == (Status.PENDING, 0)
    assert retried.finished_at is None and retried.last_error == "boom"
    event = (await queue.task_detail(task.id)).events[-1]
    assert (event.kind, event.actor, event.detail["from"]) == ("retried", "ops", "failed")
    again = await queue.task_claim(CAP, "w2")
    assert again is not None and again.id == task.id


async def test_retry_refuses_a_task_whose_dedupe_key_is_taken_again(queue: TaskQueue) -> None:
    task = await claimed(queue, dedupe_key="k")
    await queue.task_fail(task.id, "w1", "boom", claim=task.claim, retry=False)
    await enqueue(queue, dedupe_key="k")
    with pytest.raises(Conflict, match="dedupe key"):
        await queue.task_retry(task.id)
    assert (await queue.task_get(task.id)).status is Status.FAILED


async def test_cancel_stops_unfinished_work_and_records_why(queue: TaskQueue) -> None:
    task_id = await task_in(queue, Status.APPROVED)
    cancelled = await queue.task_cancel(task_id, actor="ops", reason="duplicate")
    assert cancelled.status is Status.CANCELLED and cancelled.finished_at is not None
    event = (await queue.task_detail(task_id)).events[-1]
    assert (event.kind, event.actor, event.detail["reason"]) == ("cancelled", "ops", "duplicate")
    assert await queue.task_claim(CAP, "w1") is None


async def test_operator_calls_on_a_missing_task_are_task_not_found(queue: TaskQueue) -> None:
    with pytest.raises(TaskNotFound):
        await queue.task_retry(999_999)
    with pytest.raises(TaskNotFound):
        await queue.task_cancel(999_999)
    with pytest.raises(TaskNotFound):
        await queue.task_get(999_999)
    with pytest.raises(TaskNotFound):
        await queue.event_insert(999_999, "note")


async def test_task_list_filters_by_status_and_capability(queue: TaskQueue) -> None:
    a = await enqueue(queue)
    b = await enqueue(queue, "other")
    running = await claimed(queue, "third")
    assert [t.id for t in await queue.task_list()] == [a, b, running.id]
    assert [t.id for t in await queue.task_list(status=Status.PENDING)] == [a, b]
    assert [t.id for t in await queue.task_list(status="pending", capability="other")] == [b]
    assert [t.id for t in await queue.task_list(limit=1)] == [a]


async def test_task_list_refuses_an_unknown_status(offline: TaskQueue) -> None:
    with pytest.raises(BadInput, match="unknown status 'done'"):
        await offline.task_list(status="done")
