"""Figure 4: claim latency beside a million finished rows, uncapped and with max_running."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import psycopg

from bench.measure import enqueue_ids, execute, latency_ms, timed
from taskqueue import TaskQueue

log = logging.getLogger("signoff.bench")

CAPABILITY = "bench.latency"
OTHER = "bench.other"
# The bare claim's own pending rows, in the same table beside the same finished rows.
BARE = "bench.bare"
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

# The yardstick of goal 5: the textbook claim, one FOR UPDATE SKIP LOCKED statement in
# autocommit, on Signoff's own table (its indexes, its trigger, the million rows), setting
# what a running row must hold. No event, no approval lookup, no cap: what the claim costs
# the disk and the server before Signoff's rules. Completed the same way, untimed.
_BARE_CLAIM = """
UPDATE tasks SET status = 'running', worker = %(worker)s, claim_token = gen_random_uuid(),
       lease_expires_at = now() + interval '300 seconds',
       first_claimed_at = COALESCE(first_claimed_at, now())
WHERE id = (SELECT id FROM tasks
            WHERE capability = %(capability)s AND status IN ('pending', 'approved')
              AND run_after <= now()
            ORDER BY (status = 'approved') DESC, priority DESC, id
            LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id"""
_BARE_COMPLETE = """
UPDATE tasks SET status = 'succeeded', finished_at = now(), worker = NULL, claim_token = NULL,
       lease_expires_at = NULL
WHERE id = %(id)s AND status = 'running'"""

# The claim as TaskQueue.task_claim calls it: the database's signoff_claim function, whose
# nested statements are what claim_explain reads (the core's own query, which adds the
# approval's columns around this call, is private; the function is the claim in force).
_CLAIM_CALL = """
SELECT * FROM signoff_claim(%(capability)s, %(worker)s, %(lease)s, %(n)s, %(answered_only)s)"""

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


def plan_summary(plans: list[str]) -> dict[str, Any]:
    """The parts of the claim's nested plans (one per statement signoff_claim ran, from
    auto_explain with ANALYZE and BUFFERS) that say whether the claim stays cheap."""
    text = "\n".join(plans)
    lines = text.splitlines()
    durations = [float(m) for m in re.findall(r"duration: ([\d.]+) ms", text)]
    scans = [re.sub(r"\s+\(cost=[^)]*\)", "", line).strip().removeprefix("->").strip()
             for line in lines if re.search(r"Scan .*on tasks\b", line)]
    return {"statements": len(plans), "uses_claimable_index": "tasks_claimable_idx" in text,
            "statement_ms": durations, "scans_on_tasks": scans,
            "buffers": [x.strip() for x in lines if "Buffers:" in x][:4]}


_AUTO_EXPLAIN = ("LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
                 "SET auto_explain.log_analyze = on", "SET auto_explain.log_buffers = on",
                 "SET auto_explain.log_nested_statements = on", "SET client_min_messages = log")


async def claim_explain(dsn: str, capability: str) -> dict[str, Any]:
    """The plans of the statements one claim runs inside signoff_claim (a plain EXPLAIN of
    the call would show only the function scan), rolled back so nothing is claimed. The
    third call is the one kept: by then the function's plans are cached, as in a worker."""
    params = {"capability": capability, "worker": "bench-explain", "lease": None, "n": 1,
              "answered_only": False}
    plans: list[str] = []
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        conn.add_notice_handler(lambda d: plans.append(d.message_primary or ""))
        for setting in _AUTO_EXPLAIN:
            await conn.execute(setting)
        for _ in range(3):
            plans.clear()
            await conn.execute(_CLAIM_CALL, params, prepare=True)
        await conn.rollback()
    # The call's own plan (the outer statement, of this call or, arriving late, of the one
    # before) is left out: it shows only the function scan.
    return plan_summary([p for p in plans if "FROM signoff_claim(" not in p])


async def claim_complete_once(q: TaskQueue, capability: str, worker: str,
                              done: int) -> tuple[float, float]:
    """One claim and its completion; (claim, claim+complete) seconds. `done` counts the
    claims before, for the error when the capability ran out."""
    start = time.perf_counter()
    task, claim_s = await timed(q.task_claim(capability, worker))
    if task is None:
        raise RuntimeError(f"{capability} ran out of tasks after {done} claims")
    await q.task_complete(task.id, worker, claim=task.claim)
    return claim_s, time.perf_counter() - start


async def claim_complete_loop(q: TaskQueue, tasks: int, capability: str = CAPABILITY,
                              worker: str = "bench-latency"
                              ) -> tuple[list[float], list[float]]:
    """One worker claims and completes `tasks` tasks one at a time; claim and
    claim+complete seconds."""
    claims: list[float] = []
    rounds: list[float] = []
    for _ in range(tasks):
        claim_s, round_s = await claim_complete_once(q, capability, worker, len(claims))
        claims.append(claim_s)
        rounds.append(round_s)
    return claims, rounds


async def claim_beside_bare(q: TaskQueue, dsn: str, tasks: int
                            ) -> tuple[list[float], list[float], list[float]]:
    """Signoff's claim and the bare SKIP LOCKED claim, interleaved one for one, so both see
    the same disk and the same load: Signoff's claim and claim+complete seconds, and the
    bare claim's seconds."""
    claims: list[float] = []
    rounds: list[float] = []
    bare: list[float] = []
    worker = "bench-latency"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for _ in range(tasks):
            claim_s, round_s = await claim_complete_once(q, CAPABILITY, worker, len(claims))
            claims.append(claim_s)
            rounds.append(round_s)
            params = {"capability": BARE, "worker": worker}
            cur, bare_s = await timed(conn.execute(_BARE_CLAIM, params, prepare=True))
            row = await cur.fetchone()
            if row is None:
                raise RuntimeError(f"{BARE} ran out of tasks after {len(bare)} claims")
            await conn.execute(_BARE_COMPLETE, {"id": row[0]}, prepare=True)
            bare.append(bare_s)
    return claims, rounds, bare


async def claim_latency(q: TaskQueue, dsn: str, tasks: int, batch: int) -> dict[str, Any]:
    """One worker's claim latency over `tasks` pending tasks beside the finished rows,
    interleaved with as many bare SKIP LOCKED claims (goal 5's yardstick), then that of a
    claim that finds nothing (what idle workers poll)."""
    await enqueue_ids(q, CAPABILITY, tasks, batch)
    await enqueue_ids(q, BARE, tasks, batch)
    plan = await claim_explain(dsn, CAPABILITY)
    claims, rounds, bare = await claim_beside_bare(q, dsn, tasks)
    empty = [(await timed(q.task_claim(CAPABILITY, "bench-idle")))[1]
             for _ in range(min(EMPTY_CLAIMS, tasks))]
    claim, bare_claim = latency_ms(claims), latency_ms(bare)
    p99, bare_p99 = claim["p99_ms"], bare_claim["p99_ms"]
    return {"tasks": tasks, "claim": claim, "claim_complete": latency_ms(rounds),
            "bare_claim": bare_claim,
            "p99_vs_bare": round(p99 / bare_p99, 2) if p99 and bare_p99 else None,
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
