"""Figure 4: claim latency beside a million finished rows, uncapped and with max_running."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import psycopg

from bench.measure import enqueue_ids, execute, latency_ms, timed
from taskqueue import TaskQueue
from taskqueue.store.queries import query  # the claim statement itself, for EXPLAIN

log = logging.getLogger("signoff.bench")

CAPABILITY = "bench.latency"
OTHER = "bench.other"
EMPTY_CLAIMS = 200

# Succeeded tasks spread over the last 30 days, oldest first, as a month of history would be.
_FINISHED_INSERT = """
INSERT INTO tasks (capability, status, payload, result, run_after, created_at,
                   first_claimed_at, finished_at, updated_at)
SELECT %(capability)s, 'succeeded', jsonb_build_object('i', g), '{}'::jsonb, ts, ts,
       ts + interval '1 second', ts + interval '2 seconds', ts + interval '2 seconds'
FROM generate_series(1, %(rows)s) AS g,
     LATERAL (SELECT now() - interval '1 minute'
                     - interval '30 days' * (1 - g::float8 / %(rows)s)) AS s(ts)"""

# Another capability's history: mostly finished, 1% still claimable (the index's other prefix).
_OTHER_INSERT = """
INSERT INTO tasks (capability, status, payload, created_at, first_claimed_at, finished_at)
SELECT %(capability)s, s.status, jsonb_build_object('i', g), now() - interval '1 hour',
       CASE WHEN s.status <> 'pending' THEN now() - interval '50 minutes' END,
       CASE WHEN s.status <> 'pending' THEN now() - interval '40 minutes' END
FROM generate_series(1, %(rows)s) AS g,
     LATERAL (SELECT CASE WHEN g %% 100 = 0 THEN 'pending' WHEN g %% 10 = 0 THEN 'failed'
                          ELSE 'succeeded' END) AS s(status)"""

_TABLE_SIZE = """
SELECT count(*) AS rows, pg_size_pretty(pg_total_relation_size('tasks')) AS size FROM tasks"""


async def finished_rows_insert(dsn: str, rows: int, *, checkpoint: bool) -> dict[str, Any]:
    """Bulk-load `rows` succeeded tasks and rows//10 of another capability, VACUUM ANALYZE
    as autovacuum eventually would, and CHECKPOINT (server-wide, so optional) so the timed
    claims do not pay for writing the load out."""
    params = {"capability": CAPABILITY, "rows": rows}
    _, insert_s = await timed(execute(dsn, _FINISHED_INSERT, params))
    await execute(dsn, _OTHER_INSERT, {"capability": OTHER, "rows": rows // 10})
    _, vacuum_s = await timed(execute(dsn, "VACUUM (ANALYZE) tasks"))
    if checkpoint:
        await execute(dsn, "CHECKPOINT")
    size = await execute(dsn, _TABLE_SIZE)
    return {"finished_rows": rows, "other_capability_rows": rows // 10,
            "insert_seconds": round(insert_s, 2), "vacuum_analyze_seconds": round(vacuum_s, 2),
            "checkpoint": checkpoint,
            "table_rows": size["rows"], "table_size": size["size"]}


def plan_summary(lines: list[str]) -> dict[str, Any]:
    """The parts of an EXPLAIN (ANALYZE, BUFFERS) that say whether the claim stays cheap."""
    text = "\n".join(lines)
    executed = re.search(r"Execution Time: ([\d.]+) ms", text)
    scans = [re.sub(r"\s+\(cost=[^)]*\)", "", line).strip().removeprefix("->").strip()
             for line in lines if re.search(r"Scan .*on tasks\b", line)]
    return {"top_line": lines[0].strip(), "uses_claimable_index": "tasks_claimable_idx" in text,
            "execution_ms": float(executed[1]) if executed else None,
            "top_buffers": next((x.strip() for x in lines if "Buffers:" in x), None),
            "scans_on_tasks": scans}


async def claim_explain(dsn: str, capability: str) -> dict[str, Any]:
    """EXPLAIN (ANALYZE, BUFFERS) of the claim statement, rolled back so nothing is claimed."""
    params = {"capability": capability, "worker": "bench-explain", "lease": None, "n": 1}
    async with await psycopg.AsyncConnection.connect(
            dsn, cursor_factory=psycopg.AsyncClientCursor) as conn:
        cur = await conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + query("task_claim"), params)
        lines = [str(row[0]) for row in await cur.fetchall()]
        await conn.rollback()
    return plan_summary(lines)


async def claim_complete_loop(q: TaskQueue, tasks: int) -> tuple[list[float], list[float]]:
    """One worker claims and completes `tasks` tasks; claim and claim+complete seconds."""
    claims: list[float] = []
    rounds: list[float] = []
    for _ in range(tasks):
        start = time.perf_counter()
        task, claim_s = await timed(q.task_claim(CAPABILITY, "bench-latency"))
        if task is None:
            raise RuntimeError(f"{CAPABILITY} ran out of tasks after {len(claims)} claims")
        await q.task_complete(task.id, "bench-latency", claim=task.claim)
        claims.append(claim_s)
        rounds.append(time.perf_counter() - start)
    return claims, rounds


async def claim_latency(q: TaskQueue, dsn: str, tasks: int, batch: int) -> dict[str, Any]:
    """One worker's claim latency over `tasks` pending tasks beside the finished rows, then
    that of a claim that finds nothing (what idle workers poll)."""
    await enqueue_ids(q, CAPABILITY, tasks, batch)
    plan = await claim_explain(dsn, CAPABILITY)
    claims, rounds = await claim_complete_loop(q, tasks)
    empty = [(await timed(q.task_claim(CAPABILITY, "bench-idle")))[1]
             for _ in range(min(EMPTY_CLAIMS, tasks))]
    return {"tasks": tasks, "claim": latency_ms(claims), "claim_complete": latency_ms(rounds),
            "empty_claim": latency_ms(empty), "explain": plan}


async def finished_rows_latency(q: TaskQueue, dsn: str, *, rows: int, tasks: int, batch: int,
                                max_running: int, checkpoint: bool = True) -> dict[str, Any]:
    """Load the finished rows; measure uncapped, then capped by max_running (counted path)."""
    loaded = await finished_rows_insert(dsn, rows, checkpoint=checkpoint)
    log.info("loaded %s", loaded)
    uncapped = await claim_latency(q, dsn, tasks, batch)
    await q.capability_set(CAPABILITY, max_running=max_running)
    capped = await claim_latency(q, dsn, tasks, batch)
    return {**loaded, "uncapped": uncapped, "capped": {"max_running": max_running, **capped}}
