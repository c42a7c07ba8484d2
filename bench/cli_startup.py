"""CLI start-up (issue 26, goal 7): the median wall time of `signoff ls --limit 1`,
`signoff show ID` and `signoff approve ID` against a local PostgreSQL, each a fresh process
as a person runs it, beside the floor any Python CLI on psycopg pays (FLOOR), interleaved.
`python -m bench.cli_startup [--runs N] [--admin-dsn DSN]`."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.database import ADMIN_DSN, database_create, database_drop
from taskqueue import TaskQueue

DATABASE = "signoff_cli_startup"
SIGNOFF = str(Path(sys.executable).with_name("signoff"))
# The floor any Python CLI on psycopg pays: the interpreter, asyncio and psycopg's imports,
# one connection and one small query, as `signoff ls --limit 1` reads.
FLOOR = """
import asyncio, os, psycopg
async def main():
    async with await psycopg.AsyncConnection.connect(os.environ["DATABASE_URL"]) as conn:
        await (await conn.execute("SELECT id, status FROM tasks ORDER BY id DESC LIMIT 1")
               ).fetchall()
asyncio.run(main())
"""


async def _parked(dsn: str, n: int) -> list[int]:
    """`n` tasks waiting at a question (one to approve per run)."""
    ids = []
    async with TaskQueue.connect(dsn) as queue:
        for i in range(n):
            await queue.task_enqueue("bench_cli", {"i": i})
            task = await queue.task_claim("bench_cli", "bench")
            assert task is not None
            await queue.task_park(task.id, "bench", "Go ahead?", claim=task.claim)
            ids.append(task.id)
    return ids


def _environment(dsn: str) -> dict[str, str]:
    """A person's shell: bytecode is cached (pip compiles an installed wheel; a checkout's
    first run writes __pycache__), so PYTHONDONTWRITEBYTECODE, which some sandboxes set and
    which makes every run compile Signoff's ~60 modules again, is left out."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "DATABASE_URL": dsn}


def _timed(dsn: str, argv: list[str], program: str = SIGNOFF) -> float:
    started = time.perf_counter()
    subprocess.run([program, *argv], env=_environment(dsn), check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command")
    parser.add_argument("--admin-dsn", default=ADMIN_DSN)
    args = parser.parse_args()
    dsn = asyncio.run(database_create(args.admin_dsn, DATABASE))
    try:
        ids = asyncio.run(_parked(dsn, args.runs + 1))
        times: dict[str, list[float]] = {"ls --limit 1": [], "show ID": [], "approve ID": [],
                                         "floor": []}
        _timed(dsn, ["show", str(ids[0])])  # untimed: writes the bytecode cache, if missing
        for i in range(args.runs):  # interleaved, so a noisy moment touches all three
            times["ls --limit 1"].append(_timed(dsn, ["ls", "--limit", "1"]))
            times["show ID"].append(_timed(dsn, ["show", str(ids[0])]))
            times["approve ID"].append(_timed(dsn, ["approve", str(ids[i + 1]), "--by", "b"]))
            times["floor"].append(_timed(dsn, ["-c", FLOOR], sys.executable))
        baseline = min(_timed_python() for _ in range(5))
        floor = statistics.median(times["floor"])
        for name, xs in times.items():
            print(f"{name:14} median {statistics.median(xs) * 1000:5.0f} ms   "
                  f"min {min(xs) * 1000:5.0f}   max {max(xs) * 1000:5.0f}   (n={len(xs)})   "
                  f"{statistics.median(xs) / floor:.2f} × floor")
        print(f"{'python -c pass':14} min    {baseline * 1000:5.0f} ms")
    finally:
        asyncio.run(database_drop(args.admin_dsn, DATABASE))


def _timed_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
