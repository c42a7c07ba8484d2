"""Issue 44's scale goals in one database: 10,000,000 finished tasks, 1,000,000 decisions
among them and 100,000 open approvals (bench/scale_load.py writes them), then, in order:

1. claim p99 beside a bare SKIP LOCKED claim on the same table (bench/finished.py's);
2. the Tasks page's filtered first pages (TaskQueue.task_search, as bench/task_list.py
   times them) and the inbox's first page: its reads through the public API, and the
   first byte of `/` from a real `signoff web` (bench/web_inbox.py's ttfb_ms);
3. `signoff stats --decisions` as a fresh process, and its query (decision_stats) alone;
4. `signoff prune --older-than DAYS` over the oldest `--prune` finished tasks (last: it
   deletes them).

    python -m bench.scale                  # the issue's sizes: about an hour, 13 GB
    python -m bench.scale --quick          # a smoke run of a few seconds

Each figure carries its goal, `met`, and the command line that gives it. Exit 1 when the
load did not write every row it should, or a claimed task was not completed exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from bench.database import database_options, run_in_own_database
from bench.finished import BARE, CAPABILITY, claim_latency
from bench.measure import execute, positive, report
from bench.resume import ROOT
from bench.scale_load import Sizes, load
from bench.scale_web import served_pages
from bench.task_list import CAPABILITIES, page_ms
from bot.web.app import WebApp
from bot.web.pages.inbox import PAGE, page_cards
from taskqueue import TaskQueue

log = logging.getLogger("signoff.bench")

DATABASE = "signoff_bench_scale"
FULL = {"finished": 10_000_000, "open_approvals": 100_000, "decisions": 1_000_000,
        "claims": 1000, "prune": 100_000, "runs": 7}
QUICK = {"finished": 2000, "open_approvals": 100, "decisions": 500, "claims": 20,
         "prune": 500, "runs": 1}
GOAL_CLAIM_RATIO = 1.5
GOAL_PAGE_MS = 50.0
GOAL_STATS_S = 1.0
GOAL_PRUNE_RATE = 1000.0
FINISHED = ("succeeded", "failed", "skipped", "expired", "cancelled")
# Every exactly-once count of the claim figure: each claimed task once claimed, once done.
_ONCE = """
SELECT count(*) FILTER (WHERE t.status = 'succeeded' AND e.claimed = 1 AND e.completed = 1)
         AS once,
       count(*) AS tasks
FROM tasks t,
     LATERAL (SELECT count(*) FILTER (WHERE kind = 'claimed') AS claimed,
                     count(*) FILTER (WHERE kind = 'completed') AS completed
              FROM task_events WHERE task_id = t.id) e
WHERE t.capability = %(capability)s AND t.id > %(after)s"""


def tasks_page_cases() -> dict[str, dict[str, Any]]:
    """The Tasks page's filters over this load (a page is 51 rows, as the page asks)."""
    return {
        "status failed (8 % of the undecided)": {"status": "failed"},
        "capability vm, status cancelled": {"capability": "vm", "status": "cancelled"},
        "who decided: alice (1 in 20 decisions)": {"decided_by": ["alice", "web:alice"]},
        "created in the last day": {"created_after": datetime.now(UTC) - timedelta(days=1)},
        "search, an address in 1 task in 50,000": {"text": "user49999@example.com"},
        "search, a question's word (report)": {"text": "report"},
    }


def no_flush_wait(dsn: str) -> str:
    """`dsn` with synchronous_commit off for the session: the bare claim's commit then
    does not wait for the WAL flush, as Signoff's claim's does not (claim.sql, 1d9ed1a)."""
    return psycopg.conninfo.make_conninfo(dsn, options="-c synchronous_commit=off")


async def claim_figure(q: TaskQueue, dsn: str, claims: int) -> dict[str, Any]:
    """Goal: claim p99 ≤ 1.5 × the bare SKIP LOCKED claim's, interleaved one for one
    (bench/finished.py's claim_latency), judged beside a bare claim that commits as
    Signoff's does; bench/finished.py's own bare claim (waiting for the flush) follows."""
    after = (await execute(dsn, "SELECT max(id) AS id FROM tasks"))["id"]
    batch = min(claims, 1000)
    like = await claim_latency(q, no_flush_wait(dsn), claims, batch)
    log.info("claim beside a bare claim without the flush wait: p99 ratio %s",
             like["p99_vs_bare"])
    flushed = await claim_latency(q, dsn, claims, batch)
    log.info("claim beside bench/finished.py's bare claim: p99 ratio %s",
             flushed["p99_vs_bare"])
    once = await execute(dsn, _ONCE, {"capability": CAPABILITY, "after": after})
    bare = await execute(dsn, _ONCE.replace("e.claimed = 1 AND e.completed = 1", "true"),
                         {"capability": BARE, "after": after})
    ratio = like["p99_vs_bare"]
    return {"p99_vs_bare": ratio, "like_for_like": like, "bare_waits_for_flush": flushed,
            "exactly_once": once["once"] == once["tasks"] == bare["once"] == bare["tasks"]
            == 2 * claims,
            "goal": f"claim p99 ≤ {GOAL_CLAIM_RATIO:g} × bare p99, both without the flush wait",
            "met": ratio is not None and ratio <= GOAL_CLAIM_RATIO}


async def tasks_page_figure(q: TaskQueue, runs: int) -> dict[str, Any]:
    """Goal: every filtered first page ≤ 50 ms (the median of `runs`), the query's time."""
    await q.task_search(limit=51)  # warm the connection and the catalog
    pages = {"no filter, newest first": await page_ms(q, runs)}
    filtered = {name: await page_ms(q, runs, **kw) for name, kw in tasks_page_cases().items()}
    worst = max(p["median_ms"] for p in filtered.values())
    return {"pages": pages | filtered, "worst_filtered_median_ms": worst,
            "clock": "TaskQueue.task_search, call to return (bench/task_list.py's page_ms)",
            "goal": f"each filtered page ≤ {GOAL_PAGE_MS:g} ms", "met": worst <= GOAL_PAGE_MS}


async def inbox_reads(app: WebApp) -> tuple[int, int]:
    """The reads of the inbox's first page, as bot/web/pages/inbox.py's inbox() makes
    them for `/` (without the template): (open approvals, cards)."""
    shown, _ = await app.queue.approval_list_open_page(None, PAGE)
    total = await app.queue.approval_count_open()
    return total, len(await page_cards(app, shown))


async def inbox_figure(q: TaskQueue, dsn: str, runs: int) -> dict[str, Any]:
    """Goal: the inbox's first page ≤ 50 ms on the server: judged on the first byte of `/`
    from `signoff web` (reads and template), the reads alone beside it."""
    app = WebApp(q)
    await inbox_reads(app)  # warm
    samples, shown = [], (0, 0)
    for _ in range(runs):
        started = time.perf_counter()
        shown = await inbox_reads(app)
        samples.append((time.perf_counter() - started) * 1000)
    served = await asyncio.to_thread(served_pages, dsn, runs)
    ttfb = served["ttfb_ms"]["/"]
    return {"reads": {"median_ms": round(statistics.median(samples), 1),
                      "max_ms": round(max(samples), 1), "open": shown[0], "cards": shown[1]},
            "served": served,
            "clock": "reads: the page's TaskQueue calls, first to last; served: request "
                     "sent to the answer's status line (bench/web_inbox.py's ttfb_ms)",
            "goal": f"the first byte of / ≤ {GOAL_PAGE_MS:g} ms (median)",
            "met": ttfb <= GOAL_PAGE_MS}


def signoff_env(dsn: str) -> dict[str, str]:
    """The environment a person's `signoff` runs in: this database, no config file."""
    env = {**os.environ, "DATABASE_URL": dsn}
    env.pop("SIGNOFF_CONFIG", None)
    return env


def signoff_timed(dsn: str, *argv: str) -> tuple[float, str]:
    """`python -m taskqueue ARGV` as a fresh process: its wall time (s) and stdout."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "taskqueue", *argv], cwd=ROOT,
                          env=signoff_env(dsn), capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"signoff {' '.join(argv)} exited {done.returncode}: "
                           f"{done.stderr[-2000:]}")
    return seconds, done.stdout


async def stats_figure(q: TaskQueue, dsn: str, runs: int) -> dict[str, Any]:
    """Goal: `signoff stats --decisions` ≤ 1 s (the median of `runs` fresh processes);
    its one query, TaskQueue.decision_stats, timed alone beside it."""
    walls = []
    for _ in range(runs):
        seconds, out = await asyncio.to_thread(signoff_timed, dsn, "stats", "--decisions")
        walls.append(seconds)
    queries, rows = [], []
    for _ in range(runs):
        started = time.perf_counter()
        rows = await q.decision_stats()
        queries.append(time.perf_counter() - started)
    total = rows[-1]
    decided = total.approved + total.revised + total.skipped + (total.expired or 0)
    wall = statistics.median(walls)
    return {"command": "signoff stats --decisions", "cli_median_s": round(wall, 3),
            "cli_max_s": round(max(walls), 3), "cli_lines": len(out.splitlines()),
            "query_median_s": round(statistics.median(queries), 3),
            "query_max_s": round(max(queries), 3), "rows": len(rows),
            "decisions_counted": decided, "requests_counted": total.requests,
            "clock": "cli: process start to exit; query: decision_stats call to return",
            "goal": f"the CLI ≤ {GOAL_STATS_S:g} s (median)", "met": wall <= GOAL_STATS_S}


async def prune_figure(dsn: str, tasks: int) -> dict[str, Any]:
    """Goal: prune ≥ 1,000 finished tasks a second: `signoff prune --older-than DAYS`, DAYS
    the age of finished task `tasks` (ids follow age), so about the oldest `tasks` go
    with their events, approvals and notifications, then the pruner's VACUUM."""
    age = await execute(dsn, "SELECT EXTRACT(EPOCH FROM now() - finished_at) / 86400 AS d "
                             "FROM tasks WHERE id = %(id)s", {"id": tasks})
    days = f"{float(age['d']):.9f}"
    argv = ("prune", "--older-than", days, "--json")
    seconds, out = await asyncio.to_thread(signoff_timed, dsn, *argv)
    run = json.loads(out)
    pruner_s = (run["duration_ms"] + (run["vacuum_ms"] or 0)) / 1000
    rate = run["tasks"] / pruner_s if pruner_s else 0.0
    return {"command": "signoff " + " ".join(argv), "target": tasks, "report": run,
            "cli_seconds": round(seconds, 2),
            "deletes_per_s": round(run["tasks"] / (run["duration_ms"] / 1000), 1)
            if run["duration_ms"] else 0.0,
            "per_s": round(rate, 1),
            "clock": "the pruner's own: its deletes (duration_ms) plus its VACUUM (vacuum_ms)",
            "goal": f"≥ {GOAL_PRUNE_RATE:g} finished tasks/s, deletes and VACUUM",
            "met": rate >= GOAL_PRUNE_RATE}


async def timed_figure(name: str, figure: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """One figure with the seconds it took (load included in none), logged as it ends."""
    log.info("%s: measuring", name)
    started = time.perf_counter()
    found = await figure
    seconds = round(time.perf_counter() - started, 1)
    log.info("%s: %.1f s, goal %s", name, seconds, "met" if found["met"] else "not met")
    return {**found, "seconds": seconds}


async def measure(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    sizes = Sizes(args.finished, args.decisions, args.open_approvals,
                  (*CAPABILITIES, CAPABILITY))
    log.info("loading %s", sizes)
    loaded = await load(dsn, sizes, checkpoint=not args.no_checkpoint)
    log.info("loaded in %.1f s: %s", loaded["seconds"], loaded["parts_seconds"])
    async with TaskQueue.connect(dsn, max_size=4) as q:
        figures = {
            "claim": await timed_figure("claim", claim_figure(q, dsn, args.claims)),
            "tasks_page": await timed_figure("tasks page", tasks_page_figure(q, args.runs)),
            "inbox": await timed_figure("inbox", inbox_figure(q, dsn, args.runs)),
            "stats_decisions": await timed_figure("stats --decisions",
                                                  stats_figure(q, dsn, args.runs)),
        }
    figures["prune"] = await timed_figure("prune",
                                          prune_figure(dsn, min(args.prune, args.finished)))
    return {"sizes": {k: getattr(args, k) for k in FULL}, "load": loaded, **figures,
            "met": {name: f["met"] for name, f in figures.items()},
            "exactly_once": loaded["complete"] and figures["claim"]["exactly_once"]}


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.scale", description=(
        "Issue 44's scale goals in one database: load the finished tasks, decisions and "
        "open approvals, then time the claim, the Tasks and inbox pages, `signoff stats "
        "--decisions` and `signoff prune`, each beside its goal; JSON on stdout."))
    p.add_argument("--finished", type=positive, help="finished tasks (10000000)")
    p.add_argument("--open-approvals", type=positive, help="open approvals (100000)")
    p.add_argument("--decisions", type=positive,
                   help="decided approvals among the finished tasks (1000000)")
    p.add_argument("--claims", type=positive, help="claims timed, and bare ones (1000)")
    p.add_argument("--prune", type=positive, help="oldest finished tasks pruned (100000)")
    p.add_argument("--runs", type=positive, help="runs of each page and command (7)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes (2000, 100, 500, …), for a smoke run")
    p.add_argument("--no-checkpoint", action="store_true",
                   help="no CHECKPOINT after the load (it is server-wide)")
    database_options(p, DATABASE)
    args = p.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


async def main(argv: list[str]) -> dict[str, Any]:
    args = parse_args(argv)
    return await run_in_own_database("scale", "bench.scale", argv, args,
                                     lambda dsn: measure(dsn, args))


if __name__ == "__main__":
    sys.exit(0 if report(main, None)["exactly_once"] else 1)
