"""TaskQueue.task_list_finished: a window's finished tasks, a few per group, with totals; the
inbox's open approvals: all their ids, a page of them after an approval, and their count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskqueue import BadInput, Decision, Reaper, Status, TaskQueue
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


async def _dated(queue: TaskQueue, when: datetime, *approval_ids: int) -> None:
    await sql(queue, "UPDATE approvals SET created_at = %s WHERE id = ANY(%s)", when,
              list(approval_ids))


async def _walk(queue: TaskQueue, limit: int) -> list[tuple[list[int], int]]:
    """Every page of the open approvals, each after the last one's last id."""
    pages, after = [], None
    while True:
        ids, before = await queue.approval_list_open_page(after, limit)
        pages.append((ids, before))
        if not ids:
            return pages
        after = ids[-1]


async def test_open_pages_follow_the_inbox_order_through_ties_to_the_last(
        queue: TaskQueue) -> None:
    asked = [(await parked(queue, question=f"Q{n}?"))[1].id for n in range(7)]
    day = datetime(2026, 12, 1, tzinfo=UTC)
    # Ties: two asked at one instant, four at the next (their ids order them); and the
    # last one asked dated before them all.
    await _dated(queue, day, *asked[:6])
    await _dated(queue, day + timedelta(seconds=1), *asked[1:5])
    await _dated(queue, day - timedelta(seconds=1), asked[6])
    order = [asked[6], asked[0], asked[5], *asked[1:5]]
    assert await queue.approval_list_open_ids() == order

    assert await _walk(queue, 3) == [(order[:3], 0), (order[3:6], 3), (order[6:], 6),
                                     ([], 7)]
    assert await queue.approval_list_open_page(None, 25) == (order, 0)
    assert await queue.approval_list_open_page(order[2], 2) == (order[3:5], 3)
    assert await queue.approval_count_open() == 7
    with pytest.raises(BadInput, match="limit"):
        await queue.approval_list_open_page(None, 0)


async def test_a_page_after_an_approval_decided_meanwhile_starts_at_a_greater_id(
        queue: TaskQueue) -> None:
    """As the inbox always paged: once `after` is decided, the page starts at the first open
    approval, in the inbox's order, whose id is greater than it (not after its key)."""
    a, b, c, d = [(await parked(queue, question=f"{n}?"))[1].id for n in "abcd"]
    day = datetime(2026, 12, 1, tzinfo=UTC)
    for n, approval_id in enumerate((a, c, b, d)):  # the inbox's order: a, c, b, d
        await _dated(queue, day + timedelta(seconds=n), approval_id)
    await queue.approval_decide(b, Decision.APPROVED, "alice")
    assert await queue.approval_list_open_ids() == [a, c, d]

    assert await queue.approval_list_open_page(b, 25) == ([c, d], 1)
    assert await queue.approval_list_open_page(a, 25) == ([c, d], 1)
    assert await queue.approval_list_open_page(0, 25) == ([a, c, d], 0)
    await queue.approval_decide(d, Decision.SKIPPED, "alice")
    assert await queue.approval_list_open_page(d, 25) == ([], 2)
    assert await queue.approval_list_open_page(10**12, 25) == ([], 2)
    assert await queue.approval_list_open_page(c, 25) == ([], 2)


async def _open_everywhere(queue: TaskQueue) -> dict[str, Any]:
    ids = await queue.approval_list_open_ids()
    walked = [i for page, _ in await _walk(queue, 2) for i in page]
    return {"ids": ids, "walked": walked, "count": await queue.approval_count_open()}


async def test_the_open_count_and_pages_agree_with_the_open_list(queue: TaskQueue) -> None:
    """Through every way an approval stops being open, or never was: decided, partly
    approved (four eyes: still open), expired, its task cancelled, superseded by the
    question its task asks after a retry; and an asked request."""
    kept = (await parked(queue, question="Kept?"))[1].id
    decided = (await parked(queue, "other", question="Decided?"))[1].id  # its task runs again
    await queue.approval_decide(decided, Decision.REVISED, "alice", "shorter")
    partly = (await parked(queue, question="Two?", required_approvals=2))[1].id
    await queue.approval_decide(partly, Decision.APPROVED, "alice")
    expired = (await parked(queue, question="Late?"))[1]
    await sql(queue, "UPDATE approvals SET expires_at = now() - interval '1 s' WHERE id = %s",
              expired.id)
    await Reaper(queue).run_once()
    dropped_task, dropped = await parked(queue, question="Dropped?")
    await queue.task_cancel(dropped_task.id)
    again_task, superseded = await parked(queue, question="Again?")
    await queue.task_cancel(again_task.id)
    await queue.task_retry(again_task.id)
    task = await queue.task_claim("demo", "w1")
    assert task is not None and task.id == again_task.id
    current = await queue.task_park(task.id, "w1", "Again, now?", claim=task.claim)
    asked, _ = await queue.request_park("demo", "May I?", asked_by="agent")

    found = await _open_everywhere(queue)
    assert found["ids"] == [kept, partly, current.id, asked.approval.id]
    assert not {decided, expired.id, dropped.id, superseded.id} & set(found["ids"])
    assert found["walked"] == found["ids"] and found["count"] == 4
    # A page after the superseded approval: as after any approval no longer open.
    assert await queue.approval_list_open_page(superseded.id, 25) == (found["ids"][2:], 2)
