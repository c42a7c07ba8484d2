"""task_search over the tasks at rest (finished, or waiting for a person): an open approval
is in the list's ordered indexes (migration 0030), so a filtered page walks them and stops
at its end instead of checking every open approval; a value the statistics know as common
is walked without counting its matches. Every way of reading a page gives the same tasks."""

from __future__ import annotations

import itertools
from typing import Any

import psycopg
import pytest

from taskqueue import Decision, Status, TaskQueue

from ..factories import CAP, claimed, enqueue, parked, sql

OPEN = 3000
DECIDED = 300

# Open approvals one every 10 s back from now, and between them (one in ten) finished
# tasks that alice skipped, each with "report" in its question and its payload: a page of
# either filter finds its 51 among the newest few hundred tasks at rest.
_LOAD = f"""
INSERT INTO tasks (capability, status, payload, created_at, updated_at, first_claimed_at)
SELECT %(cap)s, 'needs_approval', jsonb_build_object('n', g), now() - g * interval '10 s',
       now() - g * interval '10 s', now() - g * interval '10 s'
FROM generate_series(1, {OPEN}) g;
INSERT INTO approvals (task_id, capability, question, expires_at)
SELECT id, capability, 'Send the application ' || id || '?', now() + interval '30 days'
FROM tasks WHERE status = 'needs_approval';
INSERT INTO tasks (capability, status, payload, created_at, updated_at, first_claimed_at,
                   finished_at)
SELECT %(cap)s, 'skipped', jsonb_build_object('title', 'report ' || g),
       now() - g * interval '100 s' + interval '5 s', now() - g * interval '100 s',
       now() - g * interval '100 s', now() - g * interval '100 s'
FROM generate_series(1, {DECIDED}) g;
INSERT INTO approvals (task_id, capability, question, created_at, expires_at, decision,
                       decided_by, decided_at)
SELECT id, capability, 'Send report ' || id || '?', created_at, now() + interval '1 day',
       'skipped', 'alice', finished_at
FROM tasks WHERE status = 'skipped'
"""


def _tasks_rows_read(plan: dict[str, Any]) -> int:
    """Rows the plan's scans of `tasks` read: those kept and those its filter removed."""
    read = 0
    if plan.get("Relation Name") == "tasks":
        loops = plan.get("Actual Loops", 1)
        read += (plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)) * loops
    for child in plan.get("Plans", []):
        read += _tasks_rows_read(child)
    return read


def _named_reads(queue: TaskQueue, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the named statements `queue` runs from now on (its _one), in order."""
    asked: list[str] = []
    one = queue._one

    async def named(conn: Any, name: str, params: Any) -> Any:
        asked.append(name)
        return await one(conn, name, params)

    monkeypatch.setattr(queue, "_one", named)
    return asked


@pytest.fixture
async def many_open(queue: TaskQueue, dsn: str) -> TaskQueue:
    """The queue over _LOAD's rows, vacuumed and analysed (its statistics in place)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in _LOAD.split(";"):
            conn.execute(statement, {"cap": CAP})
        conn.execute("VACUUM ANALYZE tasks")
        conn.execute("VACUUM ANALYZE approvals")
    return queue


@pytest.mark.parametrize("filters", [{"decided_by": ["Alice"]}, {"text": "report"}],
                         ids=["who decided", "a question's word"])
async def test_a_page_among_many_open_approvals_stops_at_its_end(
        many_open: TaskQueue, monkeypatch: pytest.MonkeyPatch,
        filters: dict[str, Any]) -> None:
    """Before migration 0030 each of the 3,000 open approvals was checked for the page; now
    the page's statement reads a few hundred tasks (the walk through the index in the
    page's order stops at the 51st match), and a value the statistics know as common is
    not counted first."""
    queue = many_open
    # 300 of alice's decisions, 300 questions and payloads with "report", read as many (at
    # 10M tasks alice has 45,000 decisions and "report" is in a million questions).
    monkeypatch.setattr("taskqueue.store.reads.SEARCH_MANY", DECIDED // 3)
    read: list[int] = []
    run = queue._all_unprepared

    async def explained(conn: Any, statement: str, params: Any) -> Any:
        cur = await conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", params,
                                 prepare=False)
        read.append(_tasks_rows_read((await cur.fetchone())["QUERY PLAN"][0]["Plan"]))
        return await run(conn, statement, params)

    monkeypatch.setattr(queue, "_all_unprepared", explained)
    asked = _named_reads(queue, monkeypatch)
    page = await queue.task_search(limit=51, **filters)
    assert len(page) == 51
    assert all(t.status is Status.SKIPPED for t in page)
    # The load's finished tasks come after the open ones, newest first.
    assert [t.id for t in page] == list(range(OPEN + 1, OPEN + 52))
    assert len(read) == 1 and 51 <= read[0] < OPEN // 3, read
    assert [n for n in asked if n.endswith("_common")] and not [
        n for n in asked if n.endswith("_count")], asked


@pytest.mark.parametrize("filters", [{"decided_by": ["carol"]}, {"text": "zebra"},
                                     {"text": "rep*"}, {"text": "report application"}],
                         ids=["a name without decisions", "a word", "a beginning",
                              "two common words that never meet"])
async def test_a_value_the_statistics_do_not_know_as_common_is_counted(
        many_open: TaskQueue, monkeypatch: pytest.MonkeyPatch,
        filters: dict[str, Any]) -> None:
    """A rare name or word, any beginning of a word (the statistics hold words), and words
    common alone but never in one question ("report" in 300, "application" in 3,000) are
    counted first: read as their matches when few, walked when many."""
    monkeypatch.setattr("taskqueue.store.reads.SEARCH_MANY", DECIDED // 3)
    asked = _named_reads(many_open, monkeypatch)
    page = await many_open.task_search(limit=51, **filters)
    assert [n for n in asked if n.endswith("_count")], asked
    if filters.get("text") == "rep*":
        assert len(page) == 51 and all(t.status is Status.SKIPPED for t in page)
    else:
        assert page == []


async def _pages(queue: TaskQueue, size: int, sort: str, **filters: Any) -> list[int]:
    seen: list[int] = []
    after = None
    while True:
        page = await queue.task_search(limit=size, after=after, sort=sort, **filters)
        seen += [t.id for t in page]
        if len(page) < size:
            return seen
        last = page[-1]
        after = (last.id, last.updated_at if sort == "updated" else last.created_at)


@pytest.fixture
async def mixed(queue: TaskQueue) -> dict[str, set[int]]:
    """Tasks in both halves and most statuses, some with "report" (a payload's word or a
    question's), some decided or approved by alice: {filter's name: the ids it finds}."""
    found: dict[str, set[int]] = {"report": set(), "alice": set()}
    for n in range(4):
        # Pending in a capability of their own: the claims below take CAP's oldest.
        found["report"].add(await enqueue(queue, "mail", payload={"title": f"report {n}"}))
        await enqueue(queue, "mail", payload={"title": f"other {n}"})
        task, approval = await parked(queue, question=f"Send report {n}?")
        found["report"].add(task.id)
        if n % 2:
            await queue.approval_decide(approval.id, Decision.SKIPPED, "alice")
            found["alice"].add(task.id)
        _, asked = await parked(queue, question=f"Restart vm {n}?", required_approvals=2)
        if n % 2 == 0:
            await queue.approval_decide(asked.id, Decision.APPROVED, "Alice")  # a vote
            found["alice"].add(asked.task_id)
        done = await claimed(queue, payload={"title": f"report done {n}"})
        if n % 2:
            await queue.task_complete(done.id, "w1", claim=done.claim)
        found["report"].add(done.id)  # succeeded, or still running
    # Approved last: the claims above would take it first.
    _, approval = await parked(queue, question="Publish the report?")
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    found["report"].add(approval.task_id)
    found["alice"].add(approval.task_id)
    return found


async def test_every_way_of_reading_a_page_finds_the_same_tasks(
        queue: TaskQueue, dsn: str, mixed: dict[str, set[int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A value read as its matches or by walking the page's order (SEARCH_MANY), chosen by
    counting or by the statistics (before and after ANALYZE), in each order and page size:
    the pages list exactly the tasks that match, each once, in the order's sequence."""
    order = {
        "newest": [r["id"] for r in await sql(
            queue, "SELECT id FROM tasks ORDER BY created_at DESC, id DESC")],
        "oldest": [r["id"] for r in await sql(
            queue, "SELECT id FROM tasks ORDER BY created_at, id")],
        "updated": [r["id"] for r in await sql(
            queue, "SELECT id FROM tasks ORDER BY updated_at DESC, id DESC")]}
    statuses = {r["id"]: r["status"] for r in await sql(queue, "SELECT id, status FROM tasks")}
    assert set(statuses.values()) == {"pending", "running", "needs_approval", "approved",
                                      "skipped", "succeeded"}
    cases: dict[str, dict[str, Any]] = {"report": {"text": "report"},
                                        "alice": {"decided_by": ["ALICE"]}}
    for analysed, many in itertools.product((False, True), (1, 2000)):
        if analysed:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("ANALYZE tasks, approvals, approval_votes")
        monkeypatch.setattr("taskqueue.store.reads.SEARCH_MANY", many)
        for (name, filters), sort, size in itertools.product(
                cases.items(), ("newest", "oldest", "updated"), (2, 3, 50)):
            want = [i for i in order[sort] if i in mixed[name]]
            got = await _pages(queue, size, sort, **filters)
            assert got == want, (name, sort, size, analysed, many)
            waiting = [i for i in want if statuses[i] == "needs_approval"]
            assert await _pages(queue, size, sort, status="needs_approval",
                                **filters) == waiting, (name, sort, size, analysed, many)
            assert await _pages(queue, size, sort, capability="elsewhere", **filters) == []
