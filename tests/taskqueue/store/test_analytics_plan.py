"""decision_stats reads each table a bounded number of times whatever its window: no part of
its plan runs once per approval, only once per capability or person at most. An earlier form
asked `a.id IN (the votes cast in the window)` of every approval outside the window; when
those votes did not fit work_mem the server ran it as a plain subplan, a scan of every such
vote per approval, and `signoff stats --decisions --since 30` over a million decisions ran
for more than ten minutes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from taskqueue import TaskQueue
from taskqueue.store.queries import query

APPROVALS = 6000  # their votes outgrow a 64 kB work_mem's hash table


async def _decided_history(queue: TaskQueue) -> None:
    """APPROVALS approves over 60 days, one vote each, written with triggers off (they would
    add notifications and audit links that no part of this plan reads), so the vote's copy
    of its time and capability (migration 0031) is written here."""
    async with queue.pool.connection() as conn:
        async with conn.transaction():
            await conn.execute("SET LOCAL session_replication_role = replica")
            await conn.execute(
                "INSERT INTO tasks (capability, status, created_at) SELECT 'mail', "
                "'succeeded', now() - g * interval '14 minutes' FROM generate_series(1, %s) g",
                (APPROVALS,))
            await conn.execute(
                "INSERT INTO approvals (task_id, capability, question, created_at, expires_at, "
                "decision, decided_by, decided_at) SELECT id, capability, 'Send?', created_at, "
                "created_at + interval '2 days', 'approved', 'alice', "
                "created_at + interval '5 minutes' FROM tasks")
            await conn.execute(
                "INSERT INTO approval_votes (approval_id, person, person_key, decided_at, "
                "seconds, capability) SELECT id, 'alice', 'alice', decided_at, 300, capability "
                "FROM approvals")
        await conn.execute("ANALYZE tasks, approvals, approval_votes")


def _loops(node: dict[str, Any]) -> Iterator[tuple[str, int]]:
    yield node["Node Type"], node["Actual Loops"]
    for child in node.get("Plans", ()):
        yield from _loops(child)


async def _plan(queue: TaskQueue, since: datetime | None) -> dict[str, Any]:
    """The report's plan as it ran, in a 64 kB work_mem (every hash table outgrows it)."""
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL work_mem = '64kB'")
        cur = await conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query("decision_stats"),
                                 {"since": since, "until": None, "capability": None},
                                 prepare=False)
        [row] = await cur.fetchall()
        return next(iter(row.values()))[0]["Plan"]  # type: ignore[no-any-return]


async def test_no_part_of_the_plan_runs_once_per_approval(queue: TaskQueue) -> None:
    await _decided_history(queue)
    for days in (30, 7, None):
        since = None if days is None else datetime.now(UTC) - timedelta(days=days)
        plan = await _plan(queue, since)
        # One capability and one person: a node runs once, or once a group found (the
        # skip through an index reads one more to find the end).
        repeated = [(name, loops) for name, loops in _loops(plan) if loops > 3]
        assert repeated == [], f"--since {days}: {repeated}"
    since = datetime.now(UTC) - timedelta(days=30)
    [total] = [r for r in await queue.decision_stats(since=since) if r.scope == "total"]
    async with queue.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM approvals WHERE decided_at >= %s",
                                 (since,))
        assert total.approved == (await cur.fetchone())["n"] > 0  # type: ignore[index]
