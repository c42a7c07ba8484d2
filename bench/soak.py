"""Signoff's soak: many tasks through the queue in rounds, with retention and VACUUM, to show
that table sizes and claim latency stay flat; printed as JSON.

Run from the repository root (see bench/HISTORY.md, "Soak: retention"):

    .venv/bin/python -m bench.soak                 # 1,000,000 tasks, its own VACUUM
    .venv/bin/python -m bench.soak --autovacuum --vacuum-every 0   # no VACUUM of its own
    .venv/bin/python -m bench.soak --quick         # a smoke run of a few seconds

Each round enqueues a batch, drains it with claimers (task_claim_many + task_complete_many;
a share park and are approved, a share send a message), checks every task completed exactly
once, runs the Pruner with a retention of seconds (it VACUUMs what it deleted after a run
that deleted `--prune-vacuum-after` rows, PrunerConfig's default; 0: never), VACUUMs the
queue's tables itself every `--vacuum-every` seconds (0: never), records the tables' sizes
and autovacuum counters and times a fixed sample of single claims. With `--autovacuum` the
server's autovacuum is on for the run (ALTER SYSTEM, put back as it was afterwards;
bench/autovacuum.py). It creates and drops its own database like bench.benchmark.
Exit code 1 when a task was not completed exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shlex
import signal
import sys
import time
from collections.abc import Coroutine, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bench.autovacuum import autovacuum_on, autovacuum_stats
from bench.churn import Mix, churn
from bench.database import database_options, in_own_database, machine_info, machine_load
from bench.measure import dumps, non_negative, positive, secrets_masked
from bench.probe import probe, probe_setup
from bench.soak_summary import summary
from bench.tables import autovacuum_setting, table_sizes, vacuum
from taskqueue import Pruner, PrunerConfig, TaskQueue, redact

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
    autovacuum: bool = False
    autovacuum_naptime: int | None = None
    prune_vacuum_after: int = PrunerConfig().vacuum_after
    mix: Mix = field(default_factory=Mix)


QUICK = Config(tasks=3000, batch=500, retention=0.5, vacuum_every=1.0, probe=20)


@dataclass
class Upkeep:
    """The run's pruner and its VACUUM clock (every 0: the soak never VACUUMs)."""

    pruner: Pruner
    every: float
    last_vacuum: float


async def upkeep(dsn: str, keep: Upkeep) -> dict[str, Any]:
    """Prune what finished longer ago than the retention (the pruner VACUUMs when it
    deleted enough); the soak's own VACUUM when it is due."""
    report = await keep.pruner.run_once()
    vacuum_s = None
    if keep.every and time.monotonic() - keep.last_vacuum >= keep.every:
        vacuum_s = await vacuum(dsn)
        keep.last_vacuum = time.monotonic()
    return {"pruned": report.tasks, "prune_ms": report.duration_ms,
            "prune_vacuum_ms": report.vacuum_ms, "vacuum_s": vacuum_s}


async def round_run(q: TaskQueue, dsn: str, config: Config, keep: Upkeep,
                    number: int, start: int) -> dict[str, Any]:
    """One round: the work, its check, the upkeep, then the sizes, what autovacuum did and
    the claim probe."""
    count = min(config.batch, config.tasks - start)
    work = await churn(q, dsn, start, count, config.mix)
    kept = await upkeep(dsn, keep)
    sizes = await table_sizes(dsn)
    vacuumed = await autovacuum_stats(dsn)
    claims = await probe(q, config.probe)
    return {"round": number, "done": start + work["completed"], **work, **kept, **sizes,
            "autovacuum": vacuumed, "claim": claims}


def _progress(r: dict[str, Any], started: float) -> None:
    tasks = r["autovacuum"].get("tasks", {})
    log.info("round %d done=%d %.0fs drain=%s/s pruned=%d prune_vacuum_ms=%s vacuum=%s "
             "autovacuums=%s dead=%s total=%.1fMB tasks_rows=%d claim_p99=%s/%s once=%s",
             r["round"], r["done"], time.monotonic() - started, r["drain_tasks_per_s"],
             r["pruned"], r["prune_vacuum_ms"], r["vacuum_s"], tasks.get("autovacuum_count"),
             tasks.get("n_dead_tup"),
             r["bytes"]["total"] / 1e6, r["tasks_rows"], r["claim"]["uncapped"]["p99_ms"],
             r["claim"]["capped"]["p99_ms"], r["exactly_once"])


async def soak_run(dsn: str, config: Config, server: dict[str, Any] | None
                   ) -> dict[str, Any]:
    """Every round of the soak on the migrated database at `dsn`, and their summary;
    `server` is what --autovacuum found and changed (None without it)."""
    started = time.monotonic()
    autovacuum = await autovacuum_setting(dsn)
    doc: dict[str, Any] = {"parameters": asdict(config),
                           "machine": await machine_info(dsn) | {"autovacuum": autovacuum},
                           "note": _vacuum_note(autovacuum, config, server)}
    log.info("%s", doc["note"])
    days = config.retention / _DAY
    async with TaskQueue.connect(dsn, min_size=1, max_size=config.mix.claimers) as q:
        await probe_setup(q, config.max_running)
        pruner = Pruner(q, PrunerConfig(days=days, audit_days=days,
                                        vacuum_after=config.prune_vacuum_after))
        keep = Upkeep(pruner, config.vacuum_every, time.monotonic())
        rounds = []
        for number, start in enumerate(range(0, config.tasks, config.batch), start=1):
            rounds.append(await round_run(q, dsn, config, keep, number, start))
            _progress(rounds[-1], started)
    doc["machine"]["load_average_end"] = machine_load()
    return doc | summary(rounds, config.tasks, config.autovacuum) | {
        "seconds": round(time.monotonic() - started, 1), "rounds": rounds}


def _vacuum_note(autovacuum: str, config: Config, server: dict[str, Any] | None) -> str:
    every, after = config.vacuum_every, config.prune_vacuum_after
    own = (f"the soak runs VACUUM (ANALYZE) on the queue's tables itself every {every:g} s"
           if every else "the soak never runs VACUUM itself")
    seen = (f"autovacuum is {autovacuum} on this server" if server is None
            else _server_note(server))
    pruner = (f"the pruner runs VACUUM (ANALYZE) on the tables its deletes reached after a "
              f"run that deleted at least {after} rows" if after
              else "the pruner deletes but never vacuums")
    return f"{seen}; {own}; {pruner}"


def _server_note(server: dict[str, Any]) -> str:
    """What --autovacuum found on the server, what it did, and the other settings."""
    was = server["before"]
    where = ", ".join(str(x) for x in (was["source"], was["sourcefile"]) if x)
    back = ("ALTER SYSTEM RESET autovacuum" if was["altered"] is None
            else f"ALTER SYSTEM SET autovacuum = {was['altered']}")
    did = (f"the soak turned it on for the run (ALTER SYSTEM SET autovacuum = on, "
           f"pg_reload_conf()) and puts it back afterwards ({back})" if server["changed"]
           else "the soak left it so")
    changed = [n for n, (_, source) in server["settings"].items() if source != "default"]
    others = (f"the server's, not defaults: {', '.join(changed)}" if changed
              else "PostgreSQL's defaults")
    naptime = server["set"].get("autovacuum_naptime")
    if naptime:
        others += (f", but for autovacuum_naptime, which the soak set to {naptime} s for the "
                   "run (--autovacuum-naptime) and puts back the same way")
    return (f"autovacuum was {was['setting']} on this server ({where}); {did}; the other "
            f"autovacuum settings are {others}")


def seconds(text: str) -> float:
    """argparse type: a number of seconds, 0 or more."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds (0 or more)")
    return value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, "signoff_soak")
    p.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    p.add_argument("--tasks", type=positive, help="tasks in the whole run (1000000)")
    p.add_argument("--batch", type=positive, help="tasks a round (10000)")
    p.add_argument("--retention", type=seconds, help="seconds a finished task is kept (5)")
    p.add_argument("--vacuum-every", type=seconds,
                   help="seconds between the soak's own VACUUMs, 0: never (30)")
    p.add_argument("--prune-vacuum-after", type=non_negative, metavar="ROWS",
                   help="the pruner's vacuum_after: it VACUUMs after a run that deleted "
                        f"ROWS rows, 0: never ({PrunerConfig().vacuum_after})")
    p.add_argument("--autovacuum", action="store_true",
                   help="turn the server's autovacuum on for the run (ALTER SYSTEM; needs a "
                        "superuser --dsn) and put it back as it was afterwards")
    p.add_argument("--autovacuum-naptime", type=positive, metavar="S",
                   help="with --autovacuum: autovacuum_naptime S seconds for the run, put "
                        "back the same way (default: the server's)")
    p.add_argument("--probe", type=positive, help="single claims timed per path a round (100)")
    p.add_argument("--claimers", type=positive, help="concurrent claimers (4)")
    p.add_argument("--claim-n", type=positive, help="tasks per task_claim_many (50)")
    return p.parse_args(argv)


def config_from(args: argparse.Namespace) -> Config:
    """--quick's sizes (or the full run's), overridden by any size given explicitly."""
    base = QUICK if args.quick else Config()
    given = {n: getattr(args, n) for n in ("tasks", "batch", "retention", "vacuum_every",
                                           "prune_vacuum_after", "probe")
             if getattr(args, n) is not None}
    mix = {n: getattr(args, n) for n in ("claimers", "claim_n") if getattr(args, n) is not None}
    return replace(base, mix=replace(base.mix, **mix), autovacuum=args.autovacuum,
                   autovacuum_naptime=args.autovacuum_naptime, **given)


async def soak(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, soak, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    config = config_from(args)
    if config.autovacuum_naptime and not config.autovacuum:
        raise SystemExit("--autovacuum-naptime needs --autovacuum")
    switch = (autovacuum_on(args.dsn, config.autovacuum_naptime) if config.autovacuum
              else nullcontext(None))
    async with switch as server:
        doc = await in_own_database(args.dsn, args.database, args.keep,
                                    lambda dsn: soak_run(dsn, config, server))
    if server is not None:
        doc["machine"]["autovacuum_server"] = server
    command = shlex.join(["python", "-m", "bench.soak", *argv])
    return {"benchmark": "signoff-soak", "command": command, "database": args.database, **doc}


async def _stopped_by_sigterm(run: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """`run`, cancelled by SIGTERM as Ctrl-C cancels it, so its clean-up (the database's
    drop, autovacuum put back) runs either way."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await run
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soak and print its JSON; 1 when a task was not completed exactly once."""
    args = sys.argv[1:] if argv is None else list(argv)
    secrets_masked(args)
    try:
        doc = asyncio.run(_stopped_by_sigterm(soak(args)))
    except KeyboardInterrupt:
        log.info("stopped by Ctrl-C after its clean-up")
        return 130
    except asyncio.CancelledError:
        log.info("stopped by SIGTERM after its clean-up")
        return 143
    print(dumps(doc))
    print(redact(f"\nratios: {doc['ratios']}\nexactly_once: {doc['exactly_once']}\n"
                 f"command: {doc['command']}"), file=sys.stderr)
    return 0 if doc["exactly_once"] else 1


if __name__ == "__main__":
    sys.exit(main())
