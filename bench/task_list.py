"""The Tasks page's list over a million finished tasks (issue 41): one page of
`TaskQueue.task_search` (51 rows, as the page asks) for each filter the page offers, and a
page deep in the keyset, timed as the median of repeated runs.
`python -m bench.task_list [--rows N] [--runs R]`."""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.database import database_options, run_in_own_database
from bench.measure import execute, positive, report, timed
from taskqueue import TaskQueue

DATABASE = "signoff_bench_task_list"
CAPABILITIES = ("mail", "vm", "build", "jobs", "code")
# Finished tasks over the last 60 days, newest last: 85 % succeeded, 8 % failed, 4 %
# cancelled, 2 % skipped, 1 % expired; the payload names one of 50,000 addresses.
_TASKS = """
INSERT INTO tasks (capability, status, payload, result, run_after, created_at,
                   first_claimed_at, finished_at, updated_at)
SELECT (ARRAY['mail', 'vm', 'build', 'jobs', 'code'])[1 + g %% 5], s.status,
       jsonb_build_object('i', g, 'to', 'user' || (g %% 50000) || '@example.com'), '{}', ts,
       ts, ts + interval '1 second', ts + interval '2 seconds', ts + interval '2 seconds'
FROM generate_series(1, %(rows)s) AS g,
     LATERAL (SELECT now() - interval '60 days' * (1 - g::float8 / %(rows)s)) AS t(ts),
     LATERAL (SELECT CASE WHEN g %% 100 < 85 THEN 'succeeded' WHEN g %% 100 < 93 THEN 'failed'
                          WHEN g %% 100 < 97 THEN 'cancelled' WHEN g %% 100 < 99 THEN 'skipped'
                          ELSE 'expired' END) AS s(status)"""
# One task in ten asked a person; five people decided them (two of them through a channel's
# actor string, as before the people's names). The database lets an approval be approved
# only over its recorded approve (migration 0020): the approvals, their votes, then the
# decisions.
_APPROVALS = """
INSERT INTO approvals (task_id, question, created_at, expires_at)
SELECT id, 'Send report ' || id || '?', created_at, created_at + interval '2 days'
FROM tasks WHERE id %% 10 = 0"""
_WHO = "(ARRAY['alice', 'bob', 'carol', 'web:dave', 'telegram:7:Erin'])[1 + task_id / 10 %% 5]"
_VOTES = f"""
INSERT INTO approval_votes (approval_id, person, decided_at)
SELECT id, {_WHO}, created_at + interval '1 second' FROM approvals"""
_DECISIONS = f"""
UPDATE approvals SET decision = 'approved', decided_by = {_WHO},
                     decided_at = created_at + interval '1 second'"""
_PENDING = """
INSERT INTO tasks (capability, payload)
SELECT 'mail', jsonb_build_object('i', g) FROM generate_series(1, 2000) AS g"""


async def load(dsn: str, rows: int) -> dict[str, Any]:
    _, tasks_s = await timed(execute(dsn, _TASKS, {"rows": rows}))
    await execute(dsn, _APPROVALS, {})
    await execute(dsn, _VOTES, {})
    await execute(dsn, _DECISIONS, {})
    await execute(dsn, _PENDING)
    _, vacuum_s = await timed(execute(dsn, "VACUUM (ANALYZE) tasks, approvals"))
    await execute(dsn, "CHECKPOINT")
    size = await execute(dsn, "SELECT count(*) AS n, pg_size_pretty(pg_total_relation_size("
                              "'tasks')) AS size FROM tasks")
    return {"finished_rows": rows, "pending_rows": 2000, "approvals": rows // 10,
            "insert_seconds": round(tasks_s, 1), "vacuum_analyze_seconds": round(vacuum_s, 1),
            "table_rows": size["n"], "table_size": size["size"]}


def cases() -> dict[str, dict[str, Any]]:
    """The page's filters, one case each (a page is 51 rows: 50 and one to know of more)."""
    now = datetime.now(UTC)
    return {
        "no filter, newest first": {},
        "status failed": {"status": "failed"},
        "status expired (1 %)": {"status": "expired"},
        "capability vm": {"capability": "vm"},
        "capability vm, status cancelled": {"capability": "vm", "status": "cancelled"},
        "who decided: alice (20,000 of them)": {"decided_by": ["alice", "web:alice"]},
        "who decided: dave, as web:dave": {"decided_by": ["dave", "web:dave"]},
        "who decided: nobody": {"decided_by": ["nobody", "web:nobody"]},
        "created in the last day": {"created_after": now - timedelta(days=1)},
        "created more than 30 days ago": {"created_before": now - timedelta(days=30)},
        "oldest first": {"sort": "oldest"},
        "last changed first": {"sort": "updated"},
        "search, a question's word in 10 % (report)": {"text": "report"},
        "search, an address in 20 tasks": {"text": "user49999@example.com"},
        "search, a word's beginning (user4999*)": {"text": "user4999*"},
        "search, no match": {"text": "nobody-at-all"},
    }


async def page_ms(queue: TaskQueue, runs: int, **filters: Any) -> dict[str, Any]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        found = await queue.task_search(limit=51, **filters)
        samples.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(samples), 1),
            "max_ms": round(max(samples), 1), "rows": len(found)}


async def deep_page_ms(queue: TaskQueue, runs: int, pages: int) -> dict[str, Any]:
    """The `pages`-th page of the unfiltered list, reached through the keyset."""
    after = None
    for _ in range(pages - 1):
        found = await queue.task_search(limit=50, after=after)
        after = (found[-1].id, found[-1].created_at)
    timed_page = await page_ms(queue, runs, after=after)
    return {"page": pages, **timed_page}


async def measure(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    loaded = await load(dsn, args.rows)
    async with TaskQueue.connect(dsn, max_size=2) as queue:
        await queue.task_search(limit=51)  # warm the connection and the catalog
        figures = {name: await page_ms(queue, args.runs, **kw) for name, kw in cases().items()}
        deep = max(2, min(200, args.rows // 100))  # a page well inside the list
        figures[f"page {deep} of the unfiltered list"] = await deep_page_ms(queue, args.runs,
                                                                            deep)
    return {"load": loaded, "runs": args.runs, "pages": figures}


async def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.task_list", description=__doc__)
    parser.add_argument("--rows", type=positive, default=1_000_000,
                        help="finished tasks loaded (default 1000000)")
    parser.add_argument("--runs", type=positive, default=9, help="runs of each page")
    database_options(parser, DATABASE)
    args = parser.parse_args(argv)
    return await run_in_own_database("task_list", "bench.task_list", argv, args,
                                     lambda dsn: measure(dsn, args))


if __name__ == "__main__":
    report(main, None)
