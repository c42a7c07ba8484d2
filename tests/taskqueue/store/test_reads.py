"""TaskQueue.task_list_finished: a window's finished tasks, a few per group, with totals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskqueue import BadInput, Status, TaskQueue
from tests.taskqueue.factories import parked, sql, task_in


async def _finish_at(queue: TaskQueue, task_id: int, when: datetime) -> None:
    await sql(queue, "UPDATE tasks SET finished_at = %s WHERE id = %s", when, task_id)


async def test_finished_tasks_in_a_window_come_per_group_with_totals(queue: TaskQueue) -> None:
    day = datetime(2026, 11, 30, tzinfo=UTC)
    done = [await task_in(queue, Status.SUCCEEDED, "a") for _ in range(3)]
    for i, task_id in enumerate(done):
        await _finish_at(queue, task_id, day + timedelta(hours=i + 1))
    skipped = await task_in(queue, Status.SKIPPED, "b")
    await _finish_at(queue, skipped, day + timedelta(hours=5))
    before = await task_in(queue, Status.FAILED, "a")
    await _finish_at(queue, before, day - timedelta(seconds=1))
    after = await task_in(queue, Status.SUCCEEDED, "b")
    await _finish_at(queue, after, day + timedelta(days=1))
    await task_in(queue, Status.NEEDS_APPROVAL, "a")  # not finished: never listed

    found = await queue.task_list_finished(day, day + timedelta(days=1), per_group=2)

    assert [(t.id, total) for t, total in found] == [(done[2], 3), (done[1], 3),
                                                     (skipped, 1)]
    assert found[2][0].approval is not None and found[2][0].approval.question == "Go?"
    assert await queue.task_list_finished(day, day + timedelta(days=1), per_group=0) == []


async def test_a_negative_group_size_is_refused(queue: TaskQueue) -> None:
    day = datetime(2026, 11, 30, tzinfo=UTC)
    with pytest.raises(BadInput, match="per_group"):
        await queue.task_list_finished(day, day, per_group=-1)


async def test_open_ids_and_the_many_reads_keep_the_order_asked(queue: TaskQueue) -> None:
    _, first = await parked(queue, question="First?")
    _, second = await parked(queue, question="Second?")
    _, third = await parked(queue, question="Third?")
    await queue.approval_decide(second.id, "approved", "bob")
    assert await queue.approval_list_open_ids() == [a.id for a in await
                                                    queue.approval_list_open()]
    assert await queue.approval_list_open_ids() == [first.id, third.id]
    got = await queue.approval_get_many([third.id, 999_999, first.id])
    assert [a.question for a in got] == ["Third?", "First?"]
    tasks = await queue.task_get_many([third.task_id, first.task_id, 999_999])
    assert [t.id for t in tasks] == [third.task_id, first.task_id]
    assert tasks[0].approval is not None and tasks[0].approval.id == third.id
