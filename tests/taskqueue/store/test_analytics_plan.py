"""decision_stats reads each table a bounded number of times whatever its window: no part of
its plan runs once per approval. The form before this one asked `a.id IN (the votes cast in
the window)` of every approval outside the window; when those votes did not fit work_mem the
server ran it as a plain subplan, a scan of every such vote per approval, and `signoff stats
--decisions --since 30` over a million decisions ran for more than ten minutes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskqueue import TaskQueue
from taskqueue.store.queries import query

APPROVALS = 6000  # their votes outgrow a 64 kB work_mem's hash table


async def _decided_history(queue: TaskQueue) -> None:
    """APPROVALS approves over 60 days, one vote each, written with triggers off (they would
    add notifications and audit links that no part of this plan reads)."""
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
                "INSERT INTO approval_votes (approval_id, person, person_key, decided_at) "
                "SELECT id, 'alice', 'alice', decided_at FROM approvals")
        await conn.execute("ANALYZE tasks, approvals, approval_votes")


async def _plan(queue: TaskQueue, since: datetime | None) -> str:
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL work_mem = '64kB'")
        cur = await conn.execute("EXPLAIN " + query("decision_stats"),
                                 {"since": since, "until": None, "capability": None},
                                 prepare=False)
        return "\n".join(str(next(iter(r.values()))) for r in await cur.fetchall())


async def test_no_part_of_the_plan_runs_once_per_approval(queue: TaskQueue) -> None:
    await _decided_history(queue)
    for days in (30, 7, None):
        since = None if days is None else datetime.now(UTC) - timedelta(days=days)
        plan = await _plan(queue, since)
        per_row = [line.strip() for line in plan.splitlines()
                   if "SubPlan" in line and "hashed SubPlan" not in line]
        assert per_row == [], f"--since {days}: {per_row}\n{plan}"
    since = datetime.now(UTC) - timedelta(days=30)
    [total] = [r for r in await queue.decision_stats(since=since) if r.scope == "total"]
    async with queue.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM approvals WHERE decided_at >= %s",
                                 (since,))
        assert total.approved == (await cur.fetchone())["n"] > 0  # type: ignore[index]
