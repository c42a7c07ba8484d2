"""Signoff's soak: many tasks through the queue in rounds, with retention and VACUUM, to show
that table sizes and claim latency stay flat; printed as JSON.

Run from the repository root (see bench/README.md, "Soak: retention"):

    .venv/bin/python -m bench.soak                 # 1,000,000 tasks
    .venv/bin/python -m bench.soak --quick         # a smoke run of a few seconds

Each round enqueues a batch, drains it with claimers (task_claim_many + task_complete_many;
a share park and are approved, a share send a message), checks every task completed exactly
once, runs the Pruner with a retention of seconds, VACUUMs the queue's tables every
`--vacuum-every` seconds (autovacuum may be off), records the tables' sizes and times a fixed
sample of single claims. It creates and drops its own database like bench.benchmark.
Exit code 1 when a task was not completed exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bench.benchmark import positive
from bench.churn import Mix, churn
from bench.database import ADMIN_DSN, in_own_database, machine_info, machine_load
from bench.probe import probe, probe_setup
from bench.soak_summary import summary
from bench.tables import autovacuum_setting, table_sizes, vacuum
from taskqueue import Pruner, PrunerConfig, TaskQueue

log = logging.getLogger("signoff.bench")

_DAY = 86400.0


@dataclass(frozen=True)
class Config:
    """How much to run and how the queue is kept; the defaults are the full run."""

    tasks: int = 1_000_000
    batch: int = 10_000
    retention: float = 5.0
    vacuum_every: float = 30.0
    probe: int = 100
    max_running: int = 4
    mix: Mix = field(default_factory=Mix)


QUICK = Config(tasks=3000, batch=500, retention=0.5, vacuum_every=1.0, probe=20)


@dataclass
class Upkeep:
    """The run's pruner and its VACUUM clock."""

    pruner: Pruner
    every: float
    last_vacuum: float


async def upkeep(dsn: str, keep: Upkeep) -> dict[str, Any]:
    """Prune what finished longer ago than the retention; VACUUM when it is due."""
    report = await keep.pruner.run_once()
    vacuum_s = None
    if time.monotonic() - keep.last_vacuum >= keep.every:
        vacuum_s = await vacuum(dsn)
        keep.last_vacuum = time.monotonic()
    return {"pruned": report.tasks, "prune_ms": report.duration_ms, "vacuum_s": vacuum_s}


async def round_run(q: TaskQueue, dsn: str, config: Config, keep: Upkeep,
                    number: int, start: int) -> dict[str, Any]:
    """One round: the work, its check, the upkeep, then the sizes and the claim probe."""
    count = min(config.batch, config.tasks - start)
    work = await churn(q, dsn, start, count, config.mix)
    kept = await upkeep(dsn, keep)
    sizes = await table_sizes(dsn)
    claims = await probe(q, config.probe)
    return {"round": number, "done": start + work["completed"], **work, **kept, **sizes,
            "claim": claims}


def _progress(r: dict[str, Any], started: float) -> None:
    log.info("round %d done=%d %.0fs drain=%s/s pruned=%d vacuum=%s total=%.1fMB "
             "tasks_rows=%d claim_p99=%s/%s once=%s", r["round"], r["done"],
             time.monotonic() - started, r["drain_tasks_per_s"], r["pruned"], r["vacuum_s"],
             r["bytes"]["total"] / 1e6, r["tasks_rows"], r["claim"]["uncapped"]["p99_ms"],
             r["claim"]["capped"]["p99_ms"], r["exactly_once"])


async def soak_run(dsn: str, config: Config) -> dict[str, Any]:
    """Every round of the soak on the migrated database at `dsn`, and their summary."""
    started = time.monotonic()
    autovacuum = await autovacuum_setting(dsn)
    doc: dict[str, Any] = {"parameters": asdict(config),
                           "machine": await machine_info(dsn) | {"autovacuum": autovacuum},
                           "note": _vacuum_note(autovacuum, config.vacuum_every)}
    log.info("%s", doc["note"])
    days = config.retention / _DAY
    async with TaskQueue.connect(dsn, min_size=1, max_size=config.mix.claimers) as q:
        await probe_setup(q, config.max_running)
        keep = Upkeep(Pruner(q, PrunerConfig(days=days, audit_days=days)),
                      config.vacuum_every, time.monotonic())
        rounds = []
        for number, start in enumerate(range(0, config.tasks, config.batch), start=1):
            rounds.append(await round_run(q, dsn, config, keep, number, start))
            _progress(rounds[-1], started)
    doc["machine"]["load_average_end"] = machine_load()
    return doc | summary(rounds, config.tasks) | {
        "seconds": round(time.monotonic() - started, 1), "rounds": rounds}


def _vacuum_note(autovacuum: str, every: float) -> str:
    return (f"autovacuum is {autovacuum} on this server; the soak runs VACUUM (ANALYZE) on "
            f"the queue's tables itself every {every:g} s; the pruner deletes but never "
            "vacuums")



def seconds(text: str) -> float:
    """argparse type: a number of seconds, 0 or more."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds (0 or more)")
    return value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--dsn", default=ADMIN_DSN, help="admin DSN used to create the database")
    p.add_argument("--database", default="signoff_soak", help="dropped and recreated")
    p.add_argument("--keep", action="store_true", help="keep the database afterwards")
    p.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    p.add_argument("--tasks", type=positive, help="tasks in the whole run (1000000)")
    p.add_argument("--batch", type=positive, help="tasks a round (10000)")
    p.add_argument("--retention", type=seconds, help="seconds a finished task is kept (5)")
    p.add_argument("--vacuum-every", type=seconds, help="seconds between VACUUMs (30)")
    p.add_argument("--probe", type=positive, help="single claims timed per path a round (100)")
    p.add_argument("--claimers", type=positive, help="concurrent claimers (4)")
    p.add_argument("--claim-n", type=positive, help="tasks per task_claim_many (50)")
    return p.parse_args(argv)


def config_from(args: argparse.Namespace) -> Config:
    """--quick's sizes (or the full run's), overridden by any size given explicitly."""
    base = QUICK if args.quick else Config()
    given = {n: getattr(args, n) for n in ("tasks", "batch", "retention", "vacuum_every",
                                           "probe") if getattr(args, n) is not None}
    mix = {n: getattr(args, n) for n in ("claimers", "claim_n") if getattr(args, n) is not None}
    return replace(base, mix=replace(base.mix, **mix), **given)


async def soak(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, soak, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    config = config_from(args)
    doc = await in_own_database(args.dsn, args.database, args.keep,
                                lambda dsn: soak_run(dsn, config))
    command = shlex.join(["python", "-m", "bench.soak", *argv])
    return {"benchmark": "signoff-soak", "command": command, "database": args.database, **doc}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soak and print its JSON; 1 when a task was not completed exactly once."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    doc = asyncio.run(soak(sys.argv[1:] if argv is None else list(argv)))
    print(json.dumps(doc, indent=2))
    print(f"\nratios: {doc['ratios']}\nexactly_once: {doc['exactly_once']}\n"
          f"command: {doc['command']}", file=sys.stderr)
    return 0 if doc["exactly_once"] else 1


if __name__ == "__main__":
    sys.exit(main())
