"""task_search: the operators' task list with filters, keyset pages and three orders, over
finished and unfinished tasks alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskqueue import BadInput, Status, TaskQueue

from ..factories import CAP, backdate, enqueue, parked, sql, task_in


async def _all_pages(queue: TaskQueue, size: int, **filters: object) -> list[int]:
    seen: list[int] = []
    after = None
    sort = str(filters.get("sort", "newest"))
    while True:
        page = await queue.task_search(limit=size, after=after, **filters)  # type: ignore[arg-type]
        seen += [t.id for t in page]
        if len(page) < size:
            return seen
        last = page[-1]
        after = (last.id, last.updated_at if sort == "updated" else last.created_at)


async def test_pages_cover_every_task_once_in_each_order(queue: TaskQueue) -> None:
    ids = [await task_in(queue, s) for s in (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED,
                                             Status.NEEDS_APPROVAL, Status.RUNNING,
                                             Status.SKIPPED, Status.PENDING)]
    assert await _all_pages(queue, 2) == sorted(ids, reverse=True)
    assert await _all_pages(queue, 3, sort="oldest") == sorted(ids)
    assert sorted(await _all_pages(queue, 2, sort="updated")) == sorted(ids)
    with pytest.raises(BadInput, match="sort is one of"):
        await queue.task_search(sort="sideways")


async def test_each_filter_keeps_what_matches_and_only_that(queue: TaskQueue) -> None:
    done = await task_in(queue, Status.SUCCEEDED, "mail")
    failed = await task_in(queue, Status.FAILED, "mail")
    other = await task_in(queue, Status.SUCCEEDED, "vm")
    pending = await enqueue(queue, "mail", payload={"to": "ada@example.com", "pct": "100%"})
    assert {t.id for t in await queue.task_search(capability="mail")} == {done, failed, pending}
    assert {t.id for t in await queue.task_search(status="succeeded")} == {done, other}
    assert [t.id for t in await queue.task_search(capability="mail", status="failed")] == [failed]
    assert [t.id for t in await queue.task_search(text="ADA@example.com")] == [pending]
    assert await queue.task_search(text="ada@example") == []  # words, not pieces of words
    assert [t.id for t in await queue.task_search(text="ad*")] == [pending]  # a beginning
    assert [t.id for t in await queue.task_search(text="100%")] == [pending]
    assert await queue.task_search(text="1_0") == []
    with pytest.raises(BadInput, match="needs a word"):
        await queue.task_search(text=" *")
    await backdate(queue, "tasks", "created_at", "3 days", "id = %s", done)
    week_ago = datetime.now(UTC) - timedelta(days=1)
    assert [t.id for t in await queue.task_search(created_before=week_ago)] == [done]
    assert done not in {t.id for t in await queue.task_search(created_after=week_ago)}
    with pytest.raises(BadInput, match="unknown status"):
        await queue.task_search(status="lost")


async def test_who_decided_and_the_question_are_found_case_folded(queue: TaskQueue) -> None:
    _, approved = await parked(queue, question="Deploy the Payroll service?")
    _, four_eyes = await parked(queue, question="Delete vm-7?", required_approvals=2)
    _, untouched = await parked(queue, question="Untouched?")
    await queue.approval_decide(approved.id, "approved", "web:Alice")
    await queue.approval_decide(four_eyes.id, "approved", "Bob")  # an approve, not decided
    assert [t.id for t in await queue.task_search(decided_by=["web:alice"])] == [
        approved.task_id]
    assert [t.id for t in await queue.task_search(decided_by=["BOB"])] == [four_eyes.task_id]
    assert await queue.task_search(decided_by=["carol"]) == []
    assert await queue.task_search(text="pay") == []
    assert [t.id for t in await queue.task_search(text="pay*")] == [approved.task_id]
    found = await queue.task_search(text="payroll")
    assert [t.id for t in found] == [approved.task_id]
    assert found[0].approval is not None and found[0].approval.question.startswith("Deploy")
    assert {t.id for t in await queue.task_search()} >= {untouched.task_id}


@pytest.mark.parametrize("many", [2000, 1])
async def test_both_ways_of_reading_who_decided_and_the_text_agree(
        queue: TaskQueue, monkeypatch: pytest.MonkeyPatch, many: int) -> None:
    """A rare value reads its matches first, a common one walks the page's order
    (SEARCH_MANY): the same tasks either way."""
    monkeypatch.setattr("taskqueue.store.reads.SEARCH_MANY", many)
    _, first = await parked(queue, question="Ship the Report?")
    _, second = await parked(queue, question="Ship another report?", required_approvals=2)
    _, third = await parked(queue, question="Nothing here?")
    await queue.approval_decide(first.id, "skipped", "Alice")
    await queue.approval_decide(second.id, "approved", "alice")
    await queue.approval_decide(third.id, "approved", "bob")
    both = sorted([first.task_id, second.task_id], reverse=True)
    assert [t.id for t in await queue.task_search(decided_by=["ALICE"])] == both
    assert [t.id for t in await queue.task_search(text="report")] == both
    assert [t.id for t in await queue.task_search(text="rep*", status="skipped")] == [
        first.task_id]
    assert await queue.task_search(decided_by=["carol"]) == []


async def test_a_page_is_read_without_jit_and_the_pool_keeps_its_setting(
        queue: TaskQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a million tasks the page's plan costs past jit_above_cost, and compiling it took
    100 to 120 ms of a 51-row page; at 10M, starting two parallel workers took 7 of a 10 ms
    read (issue 44): the page's statement runs with neither, in its own transaction only."""
    await enqueue(queue, "mail", payload={"to": "ada@example.com"})
    show = ("SELECT current_setting('jit') AS jit, "
            "current_setting('max_parallel_workers_per_gather') AS workers")
    [before] = await sql(queue, show)
    seen: list[dict[str, str]] = []
    read = queue._all_unprepared

    async def reading(conn: Any, statement: str, params: Any) -> Any:
        seen.append(await (await conn.execute(show)).fetchone())
        return await read(conn, statement, params)

    monkeypatch.setattr(queue, "_all_unprepared", reading)
    assert len(await queue.task_search(text="ada@example.com")) == 1
    assert len(await queue.task_search(status="pending")) == 1
    assert seen == [{"jit": "off", "workers": "0"}] * 2
    assert before["workers"] != "0"
    for _ in range(3):  # whichever connection of the pool
        assert await sql(queue, show) == [before]


async def test_each_status_finds_its_own_tasks_in_either_half(queue: TaskQueue) -> None:
    """A status filter leaves the other half (finished or unfinished) out of the query
    altogether (at 10M tasks the unfinished half walked every failed task); each of the nine
    statuses still finds exactly its tasks, alone and with other filters."""
    # A claimable task (approved, pending) would be claimed by the next one's making: last.
    order = sorted(Status, key=lambda s: (s is Status.APPROVED) + 2 * (s is Status.PENDING))
    made = {s: await task_in(queue, s) for s in order}
    assert len(made) == 9
    for status, task_id in made.items():
        assert [t.id for t in await queue.task_search(status=status)] == [task_id], status
        assert [t.id for t in await queue.task_search(status=status.value, capability=CAP,
                                                      sort="oldest")] == [task_id], status
        assert await queue.task_search(status=status, capability="elsewhere") == []
