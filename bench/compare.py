"""Signoff beside its peers in one run, interleaved (repetition 1 of each, then 2, ...), and
the table of the issue's goals as ratios. Every drain is checked exactly once."""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from bench import peers
from bench.drain import drain
from bench.measure import batches, enqueue_ids, execute, rate, timed
from taskqueue import TaskQueue

ROOT = Path(__file__).resolve().parents[1]
# Tasks per task_claim_many in the batched drain: PgQueuer's batch size in its drain.
CLAIM_BATCH = 10
# Issue 44's goals (round 3, which replaced issue 26's 1.2 / 1.2 / 0.8 / 1.0), as ratios:
# the worker, the batched drain with 16 claimers, one task a call, batch enqueue; and the
# claim's p99 beside the finished rows.
WORKER_GOAL = 1.0
BATCH_DRAIN_GOAL = 1.1
ONE_A_CALL_GOAL = 0.6
ENQUEUE_GOAL = 1.3
CLAIM_P99_GOAL = 1.5


async def worker_process_drain(dsn: str, q: TaskQueue, tasks: int, tag: str,
                               concurrency: int = 16) -> dict[str, Any]:
    """`signoff worker --concurrency 16` (a real process) drains `tasks` no-op tasks; the
    rate runs from the first claim to the last finish, as the database recorded them."""
    capability = f"bench.worker.{tag}"
    await enqueue_ids(q, capability, tasks, 1000)
    return await worker_process_run(dsn, capability, tasks, concurrency)


async def worker_process_run(dsn: str, capability: str, tasks: int,
                             concurrency: int = 16) -> dict[str, Any]:
    """worker_process_drain on `tasks` pending tasks of `capability` already enqueued."""
    cmd = [sys.executable, "-m", "taskqueue", "worker", "--capability", capability,
           "--handler", "bench.handlers:noop", "--concurrency", str(concurrency),
           "--poll-interval", "0.5"]
    env = {**os.environ, "DATABASE_URL": dsn}
    env.pop("SIGNOFF_CONFIG", None)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60 + tasks / 50
        # One connection for the whole wait: a new one every 50 ms would start a server
        # process each time, CPU taken from the worker being measured.
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            while await _left(conn, capability) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 30)
    row = await execute(dsn, """
        SELECT count(*) FILTER (WHERE status = 'succeeded') AS done,
               EXTRACT(EPOCH FROM max(finished_at) - min(first_claimed_at))::float8 AS seconds,
               (SELECT count(*) FROM task_events e JOIN tasks t ON t.id = e.task_id
                WHERE t.capability = %(c)s AND e.kind = 'claimed') AS claims
        FROM tasks WHERE capability = %(c)s""", {"c": capability})
    seconds = row["seconds"] or 0.0
    return {"tasks": tasks, "concurrency": concurrency, "seconds": round(seconds, 3),
            "tasks_per_s": rate(tasks, seconds),
            "exactly_once": row["done"] == tasks and row["claims"] == tasks}


async def _left(conn: psycopg.AsyncConnection[Any], capability: str) -> bool:
    """Whether the capability still has work (claimable, running or parked). Two index-only
    probes: a count over the whole table (1,150,000 rows by now) every 50 ms was a parallel
    sequential scan that took a core from the worker being measured."""
    cur = await conn.execute("""
        SELECT EXISTS (SELECT 1 FROM tasks WHERE capability = %(c)s
                         AND status IN ('pending', 'approved'))
            OR EXISTS (SELECT 1 FROM tasks WHERE capability = %(c)s
                         AND status IN ('running', 'needs_approval'))""",
                             {"c": capability}, prepare=True)
    row = await cur.fetchone()
    return bool(row and row[0])


async def vacuum(dsn: str) -> None:
    """VACUUM (ANALYZE) the whole database, untimed, before each figure: what autovacuum
    does on a real server (it is off on this machine's). Every queue's table starts the
    figure without the dead rows of the drains before it, so a later repetition does not
    measure the ones before it."""
    await execute(dsn, "VACUUM (ANALYZE)")


async def signoff_enqueue(q: TaskQueue, tasks: int, batch: int, tag: str) -> float:
    calls = [(await timed(q.task_enqueue_many(f"bench.enq.{tag}", items)))[1]
             for items in batches(tasks, batch)]
    return sum(calls)


async def repetition(q: TaskQueue, dsn: str, tasks: int, batch: int, claimers: tuple[int, ...],
                     rep: int, with_pgqueuer: bool) -> dict[str, dict[str, Any]]:
    """One repetition of every figure of every queue, each right after the others."""
    out: dict[str, dict[str, Any]] = {}
    for n in claimers:
        await vacuum(dsn)
        cap = f"bench.cmp.{rep}.{n}"
        expected = await enqueue_ids(q, cap, tasks, batch)
        out[f"drain_{n}.signoff"] = await drain(dsn, cap, expected, n)
        expected = await enqueue_ids(q, f"{cap}.b", tasks, batch)
        out[f"drain_{n}.signoff_batch"] = await drain(dsn, f"{cap}.b", expected, n,
                                                      batch=CLAIM_BATCH)
        if with_pgqueuer:
            out[f"drain_{n}.pgqueuer"] = await peers.pgqueuer_drain(dsn, tasks, n, f"p{rep}.{n}")
        out[f"drain_{n}.reference"] = await peers.reference_drain(dsn, tasks, n, f"r{rep}.{n}")
    await vacuum(dsn)
    out["worker_16.signoff"] = await worker_process_drain(dsn, q, tasks, str(rep))
    await vacuum(dsn)
    seconds = await signoff_enqueue(q, tasks, batch, str(rep))
    out["enqueue.signoff"] = {"tasks_per_s": rate(tasks, seconds), "exactly_once": True}
    if with_pgqueuer:
        seconds = await peers.pgqueuer_enqueue(dsn, tasks, batch, f"e{rep}")
        out["enqueue.pgqueuer"] = {"tasks_per_s": rate(tasks, seconds), "exactly_once": True}
    return out


async def compare(q: TaskQueue, dsn: str, *, tasks: int, batch: int,
                  claimers: tuple[int, ...], repeat: int) -> dict[str, Any]:
    """Every repetition, then the median of each figure and the goals' ratios."""
    with_pgqueuer = peers.pgqueuer_available()
    if with_pgqueuer:
        await peers.pgqueuer_install(dsn)
    reps = [await repetition(q, dsn, tasks, batch, claimers, r, with_pgqueuer)
            for r in range(repeat)]
    medians = {k: statistics.median(r[k]["tasks_per_s"] for r in reps) for k in reps[0]}
    return {"pgqueuer": with_pgqueuer, "repetitions": reps, "median_tasks_per_s": medians,
            "exactly_once": all(f["exactly_once"] for r in reps for f in r.values()),
            "ratios": ratios(medians, claimers)}


def ratios(m: dict[str, float], claimers: tuple[int, ...]) -> dict[str, float | None]:
    def over(a: str, b: str) -> float | None:
        return round(m[a] / m[b], 2) if a in m and b in m and m[b] else None

    # The batched drain beside PgQueuer's batch-10 drain; both kinds beside the reference
    # queue, whose claimers take one task a statement.
    out = {f"drain_{n}_vs_pgqueuer": over(f"drain_{n}.signoff_batch", f"drain_{n}.pgqueuer")
           for n in claimers}
    out |= {f"drain_{n}_vs_reference": over(f"drain_{n}.signoff", f"drain_{n}.reference")
            for n in claimers}
    out |= {f"drain_{n}_batch_vs_reference": over(f"drain_{n}.signoff_batch",
                                                  f"drain_{n}.reference")
            for n in claimers}
    out["worker_16_vs_pgqueuer_drain_16"] = over("worker_16.signoff", "drain_16.pgqueuer")
    out["enqueue_vs_pgqueuer"] = over("enqueue.signoff", "enqueue.pgqueuer")
    return out


def table(doc: dict[str, Any]) -> str:
    """The issue's goals as one markdown table: medians, ratios, verdicts (the rows of the
    parts that ran)."""
    lines = ["| figure | Signoff | PgQueuer (asyncpg, batch 10) | reference queue | goal: ratio |",
             "|---|---|---|---|---|"]
    if "compare" in doc:
        lines += compare_rows(doc["compare"], doc["parameters"])
    if "claim_with_finished_rows" in doc:
        lines += latency_rows(doc["claim_with_finished_rows"])
    if "approve_resume" in doc:
        lines.append(resume_row(doc["approve_resume"]))
    return "\n".join(lines)


def compare_rows(cmp: dict[str, Any], parameters: dict[str, Any]) -> list[str]:
    """Goals 1 to 4: the drains, the worker and the enqueue beside the peers."""
    m, r = cmp["median_tasks_per_s"], cmp["ratios"]

    def fig(key: str) -> str:
        return f"{m[key]:,.0f} /s" if key in m else "—"

    def verdict(value: float | None, goal: float) -> str:
        return "—" if value is None else f"{value:.2f} ({'met' if value >= goal else 'not met'})"

    lines = []
    for n in parameters["claimers"]:
        goal = BATCH_DRAIN_GOAL if n == 16 else 1.0
        lines.append(f"| drain, {n} claimers, `task_claim_many` ({CLAIM_BATCH}) + "
                     f"`task_settle_many` | {fig(f'drain_{n}.signoff_batch')} | "
                     f"{fig(f'drain_{n}.pgqueuer')} | {fig(f'drain_{n}.reference')} | "
                     f"≥ {goal} × PgQueuer: {verdict(r[f'drain_{n}_vs_pgqueuer'], goal)} |")
    for n in parameters["claimers"]:
        lines.append(f"| drain, {n} claimers, one task a call (`task_claim` + "
                     f"`task_complete`) | {fig(f'drain_{n}.signoff')} | — | "
                     f"{fig(f'drain_{n}.reference')} | ≥ {ONE_A_CALL_GOAL} × reference: "
                     f"{verdict(r[f'drain_{n}_vs_reference'], ONE_A_CALL_GOAL)} |")
    lines.append(f"| `signoff worker --concurrency 16`, no-op | {fig('worker_16.signoff')} | "
                 f"{fig('drain_16.pgqueuer')} (drain, 16) | — | ≥ {WORKER_GOAL} × PgQueuer: "
                 f"{verdict(r['worker_16_vs_pgqueuer_drain_16'], WORKER_GOAL)} |")
    lines.append(f"| batch enqueue ({parameters['batch']} a call) | "
                 f"{fig('enqueue.signoff')} | {fig('enqueue.pgqueuer')} | — | "
                 f"≥ {ENQUEUE_GOAL} × PgQueuer: "
                 f"{verdict(r['enqueue_vs_pgqueuer'], ENQUEUE_GOAL)} |")
    return lines


def latency_rows(lat: dict[str, Any]) -> list[str]:
    """Goal 5: the claim's p99 beside the finished rows over the bare claim's, both paths."""
    lines = []
    for path in ("uncapped", "capped"):
        c, b, ratio = lat[path]["claim"], lat[path]["bare_claim"], lat[path]["p99_vs_bare"]
        ok = ratio is not None and ratio <= CLAIM_P99_GOAL
        lines.append(f"| claim p50 / p99 beside {lat['finished_rows']:,} finished rows, "
                     f"{path} | {c['p50_ms']} / {c['p99_ms']} ms | — | bare SKIP LOCKED "
                     f"claim {b['p50_ms']} / {b['p99_ms']} ms | p99 ≤ {CLAIM_P99_GOAL} × bare: "
                     f"{ratio} ({'met' if ok else 'not met'}) |")
    return lines


def resume_row(figure: dict[str, Any]) -> str:
    """Goal 5's row: bench.resume's approve → resume p50 / p99 against p99 < 250 ms."""
    a = figure["approve_to_resume"]
    return (f"| approve → resume p99 (p50 / p99, {figure['approvals']} approvals, idle "
            f"`signoff worker`) | {a['p50_ms']} / {a['p99_ms']} ms | — | — | "
            f"{figure['goal']}: {'met' if figure['met'] else 'not met'} |")
