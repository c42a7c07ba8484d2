"""Signoff's benchmark: enqueue, drain and claim latency on a real PostgreSQL, printed as JSON.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.benchmark             # the full run: 1,000,000 finished rows
    .venv/bin/python -m bench.benchmark --quick     # a smoke run of a few seconds
    .venv/bin/python -m bench.benchmark --resume-approvals 200   # and approve → resume

It drops and recreates its own database (`--database`, default signoff_bench), migrates it,
measures, prints one JSON document on stdout (progress goes to stderr) and drops the database
unless `--keep`. Exit code 1 when a drain did not complete every task exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from bench.compare import compare, table
from bench.database import database_options, in_own_database, machine_info, machine_load
from bench.drain import drain
from bench.finished import finished_rows_latency
from bench.measure import (
    batches,
    dumps,
    enqueue_ids,
    latency_ms,
    non_negative,
    positive,
    rate,
    secrets_masked,
    timed,
)
from bench.resume import approve_resume
from taskqueue import TaskQueue, redact

log = logging.getLogger("signoff.bench")

@dataclass(frozen=True)
class Config:
    """What to measure and how much; the defaults are the full run."""

    tasks: int = 2000
    batch: int = 500
    finished_rows: int = 1_000_000
    latency_tasks: int = 1000
    claimers: tuple[int, ...] = (1, 4, 16)
    processes: bool = False
    max_running: int = 4
    checkpoint: bool = True
    repeat: int = 3
    resume_approvals: int = 0  # 0: approve → resume is not measured
    only: tuple[str, ...] = ()  # the parts to run (PARTS); empty: all of them


# The run's parts, in the order they run; `--only` picks some.
PARTS = ("enqueue", "drain", "compare", "finished")


QUICK = Config(tasks=200, batch=50, finished_rows=20_000, latency_tasks=200, repeat=1)


# -- 1 and 2: enqueue ------------------------------------------------------------------


async def enqueue_single(q: TaskQueue, tasks: int) -> dict[str, Any]:
    """N tasks, one task_enqueue call (one transaction) each."""
    calls = [(await timed(q.task_enqueue("bench.single", {"i": i})))[1] for i in range(tasks)]
    seconds = sum(calls)
    return {"tasks": tasks, "seconds": round(seconds, 3), "tasks_per_s": rate(tasks, seconds),
            "call": latency_ms(calls)}


async def enqueue_batched(q: TaskQueue, tasks: int, batch: int) -> dict[str, Any]:
    """N tasks in task_enqueue_many calls of `batch` tasks (one transaction each)."""
    calls = [(await timed(q.task_enqueue_many("bench.batched", items)))[1]
             for items in batches(tasks, batch)]
    seconds = sum(calls)
    return {"tasks": tasks, "batch": batch, "seconds": round(seconds, 3),
            "tasks_per_s": rate(tasks, seconds), "call": latency_ms(calls)}


# -- the run -----------------------------------------------------------------------------


async def drain_figures(q: TaskQueue, dsn: str, config: Config) -> list[dict[str, Any]]:
    """Figure 3: for each claimer count, enqueue N tasks of a capability and drain them."""
    figures = []
    for n, claimers in enumerate(config.claimers):
        capability = f"bench.drain.{n}.{claimers}"
        expected = await enqueue_ids(q, capability, config.tasks, config.batch)
        log.info("drain claimers=%d tasks=%d processes=%s", claimers, config.tasks,
                 config.processes)
        figures.append(await drain(dsn, capability, expected, claimers,
                                   processes=config.processes))
    return figures


async def figures_run(dsn: str, config: Config) -> dict[str, Any]:
    """Every figure of the benchmark, measured on the migrated database at `dsn`."""
    started = time.perf_counter()
    doc: dict[str, Any] = {"parameters": asdict(config), "machine": await machine_info(dsn)}
    parts = config.only or PARTS
    doc["exactly_once"] = True
    async with TaskQueue.connect(dsn, min_size=1, max_size=2) as q:
        if "enqueue" in parts:
            log.info("enqueue tasks=%d batch=%d", config.tasks, config.batch)
            doc["enqueue_single"] = await enqueue_single(q, config.tasks)
            doc["enqueue_batched"] = await enqueue_batched(q, config.tasks, config.batch)
        if "drain" in parts:
            doc["drain"] = await drain_figures(q, dsn, config)
            doc["exactly_once"] = all(d["exactly_once"] for d in doc["drain"])
        if "compare" in parts:
            # The peers first: their tables start as small as Signoff's (figure 4's million
            # rows would otherwise sit in Signoff's table only).
            log.info("side by side with the peers, repeat=%d", config.repeat)
            doc["compare"] = await compare(q, dsn, tasks=config.tasks, batch=config.batch,
                                           claimers=config.claimers, repeat=config.repeat)
            doc["exactly_once"] = doc["exactly_once"] and doc["compare"]["exactly_once"]
        if "finished" in parts:
            log.info("claim latency finished_rows=%d", config.finished_rows)
            doc["claim_with_finished_rows"] = await finished_rows_latency(
                q, dsn, rows=config.finished_rows, tasks=config.latency_tasks,
                batch=config.batch, max_running=config.max_running,
                checkpoint=config.checkpoint)
        if config.resume_approvals:
            log.info("approve → resume approvals=%d", config.resume_approvals)
            doc["approve_resume"] = await approve_resume(dsn, config.resume_approvals)
        doc["table"] = table(doc)
    doc["machine"]["load_average_end"] = machine_load()
    doc["seconds"] = round(time.perf_counter() - started, 1)
    return doc


def claimer_counts(text: str) -> tuple[int, ...]:
    """argparse type: claimer counts such as 1,4,16."""
    return tuple(positive(part) for part in text.split(","))


def part_names(text: str) -> tuple[str, ...]:
    """argparse type: some of the run's parts, such as compare,finished."""
    names = tuple(text.split(","))
    unknown = [n for n in names if n not in PARTS]
    if unknown or not text:
        raise argparse.ArgumentTypeError(f"{text!r}: the parts are {', '.join(PARTS)}")
    return names


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, "signoff_bench")
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    p.add_argument("--tasks", type=positive, help="tasks per enqueue and drain figure")
    p.add_argument("--batch", type=positive, help="tasks per task_enqueue_many call")
    p.add_argument("--finished-rows", type=positive, help="succeeded rows beside the claims")
    p.add_argument("--latency-tasks", type=positive, help="claims timed beside them")
    p.add_argument("--max-running", type=positive, help="the cap of the capped figure")
    p.add_argument("--claimers", type=claimer_counts, help="drain claimer counts (1,4,16)")
    p.add_argument("--repeat", type=positive, help="interleaved repetitions of the peers (3)")
    p.add_argument("--resume-approvals", type=non_negative, metavar="N",
                   help="also time approve → resume over N approvals (default 0: skip)")
    p.add_argument("--only", type=part_names, metavar="PARTS",
                   help=f"run only these parts, comma-separated ({','.join(PARTS)})")
    p.add_argument("--processes", action="store_true", help="one process per claimer")
    p.add_argument("--no-checkpoint", dest="checkpoint", action="store_false",
                   help="skip the CHECKPOINT after loading the finished rows")
    return p.parse_args(argv)


def config_from(args: argparse.Namespace) -> Config:
    """--quick's sizes (or the full run's), overridden by any size given explicitly."""
    names = ("tasks", "batch", "finished_rows", "latency_tasks", "max_running", "claimers",
             "repeat", "resume_approvals", "only")
    given = {n: getattr(args, n) for n in names if getattr(args, n) is not None}
    return replace(QUICK if args.quick else Config(), processes=args.processes,
                   checkpoint=args.checkpoint, **given)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    config = config_from(args)
    doc = await in_own_database(args.dsn, args.database, args.keep,
                                lambda dsn: figures_run(dsn, config))
    command = shlex.join(["python", "-m", "bench.benchmark", *argv])
    return {"benchmark": "signoff", "command": command, "database": args.database, **doc}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its JSON; 1 when a drain was not exactly once."""
    args = sys.argv[1:] if argv is None else list(argv)
    secrets_masked(args)
    doc = asyncio.run(benchmark(args))
    print(dumps(doc))
    print(redact(f"\n{doc['table']}\n\ncommand: {doc['command']}\nmachine: {doc['machine']}"),
          file=sys.stderr)
    return 0 if doc["exactly_once"] else 1


if __name__ == "__main__":
    sys.exit(main())
