"""CLI start-up (issue 26, goal 7): the median wall time of `signoff ls --limit 1`,
`signoff show ID` and `signoff approve ID` against a local PostgreSQL, each a fresh process
as a person runs it. `python -m bench.cli_startup [--runs N] [--admin-dsn DSN]`."""

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


def _timed(dsn: str, argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([SIGNOFF, *argv], env={**os.environ, "DATABASE_URL": dsn}, check=True,
                   capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command")
    parser.add_argument("--admin-dsn", default=ADMIN_DSN)
    args = parser.parse_args()
    dsn = asyncio.run(database_create(args.admin_dsn, DATABASE))
    try:
        ids = asyncio.run(_parked(dsn, args.runs + 1))
        times: dict[str, list[float]] = {"ls --limit 1": [], "show ID": [], "approve ID": []}
        for i in range(args.runs):  # interleaved, so a noisy moment touches all three
            times["ls --limit 1"].append(_timed(dsn, ["ls", "--limit", "1"]))
            times["show ID"].append(_timed(dsn, ["show", str(ids[0])]))
            times["approve ID"].append(_timed(dsn, ["approve", str(ids[i + 1]), "--by", "b"]))
        baseline = min(_timed_python() for _ in range(5))
        for name, xs in times.items():
            print(f"{name:14} median {statistics.median(xs) * 1000:5.0f} ms   "
                  f"min {min(xs) * 1000:5.0f}   max {max(xs) * 1000:5.0f}   (n={len(xs)})")
        print(f"{'python -c pass':14} min    {baseline * 1000:5.0f} ms")
    finally:
        asyncio.run(database_drop(args.admin_dsn, DATABASE))


def _timed_python() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
