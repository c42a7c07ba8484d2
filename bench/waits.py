"""What the database server's processes do while a drain runs: on the CPU or waiting, and
for what (issue 26, goal 1: why `signoff worker` leaves the machine's CPU idle while it
falls short of PgQueuer), printed as JSON with a Markdown table.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.waits                      # 30,000 no-op tasks a queue
    .venv/bin/python -m bench.waits --tasks 5000 --interval 0.005

Two drains of `--tasks` tasks enqueued before each starts: `signoff worker --concurrency 16`
(a process of its own, as `bench.compare` runs it), then 16 PgQueuer QueueManagers (asyncpg,
batch 10) when PgQueuer is installed. During each, a thread samples `pg_stat_activity` every
`--interval` seconds on a connection of its own: every other client backend of the database
that is running a statement counts once, as `CPU` when it waits for nothing, else as its
wait event (`IO:WALSync` is the commit's flush). A statement is named by its first words (Signoff's
SQL starts with a comment saying what it is). The machine's busy share over the
drain is read from /proc/stat: all processes, the sampler's own included (one small query
per sample).
"""

from __future__ import annotations

import argparse
import re
import threading
from collections import Counter
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import psycopg

from bench import peers
from bench.compare import vacuum, worker_process_run
from bench.database import database_options, run_in_own_database
from bench.measure import enqueue_ids, positive, report
from taskqueue import TaskQueue

TASKS = 30000
INTERVAL = 0.003
WORKER_SLOTS = 16
# How many (statement, wait) rows a queue's figure keeps, most sampled first.
TOP = 12
LABEL_CHARS = 48

_SAMPLE = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait, query
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND backend_type = 'client backend' AND state = 'active'"""


def statement_label(query: str) -> str:
    """A statement's name: its text with whitespace collapsed, without a leading `--`, cut
    to LABEL_CHARS (a first line of "WITH" alone reads on into the next)."""
    text = re.sub(r"\s+", " ", query).strip()
    return text.removeprefix("--").strip()[:LABEL_CHARS]


def cpu_times() -> tuple[int, int]:
    """(all, idle) jiffies of the machine so far, from /proc/stat (idle includes iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields), fields[3] + fields[4]


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The share of the machine's CPU time that was not idle between two cpu_times()."""
    total, idle = after[0] - before[0], after[1] - before[1]
    return round(1 - idle / total, 3) if total > 0 else None


class Sampler:
    """A thread that samples the database's running statements until stopped."""

    def __init__(self, dsn: str, interval: float) -> None:
        self.dsn = dsn
        self.interval = interval
        self.counts: Counter[tuple[str, str]] = Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="waits-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while not self._stop.is_set():
                rows = conn.execute(_SAMPLE, prepare=True).fetchall()
                self.samples += 1
                self.counts.update((statement_label(q or ""), w) for w, q in rows)
                self._stop.wait(self.interval)


def figure(sampler: Sampler, drained: dict[str, Any], busy: float | None) -> dict[str, Any]:
    """One queue's figure: its rate, the machine's busy share, and what the server's busy
    processes were doing, most sampled first."""
    active = sum(sampler.counts.values())
    rows = [{"statement": s, "wait": w, "samples": n,
             "share": round(n / active, 3) if active else 0.0}
            for (s, w), n in sampler.counts.most_common(TOP)]
    waiting = sum(n for (_, w), n in sampler.counts.items() if w != "CPU")
    return {"tasks_per_s": drained["tasks_per_s"], "exactly_once": drained["exactly_once"],
            "machine_busy_share": busy, "samples": sampler.samples,
            "active_samples": active,
            "waiting_share": round(waiting / active, 3) if active else None,
            "by_wait": rows}


async def _sampled(dsn: str, interval: float, drain: Awaitable[dict[str, Any]]
                   ) -> tuple[Sampler, dict[str, Any], float | None]:
    """Run `drain` with the sampler on; the sampler, the drain's figure, the busy share."""
    with Sampler(dsn, interval) as sampler:
        before = cpu_times()
        drained = await drain
        busy = busy_share(before, cpu_times())
    return sampler, drained, busy


async def waits(dsn: str, tasks: int, interval: float) -> dict[str, Any]:
    """The worker's drain, then PgQueuer's, each sampled; the figures and the table."""
    figures: dict[str, Any] = {}
    capability = "bench.waits"
    async with TaskQueue.connect(dsn, min_size=1, max_size=1) as q:
        await enqueue_ids(q, capability, tasks, 1000)
    await vacuum(dsn)
    sampler, drained, busy = await _sampled(
        dsn, interval, worker_process_run(dsn, capability, tasks, WORKER_SLOTS))
    figures["signoff_worker"] = figure(sampler, drained, busy)
    pgqueuer = peers.pgqueuer_available()
    if pgqueuer:
        await peers.pgqueuer_install(dsn)
        await peers.pgqueuer_enqueue(dsn, tasks, 1000, "waits")
        await vacuum(dsn)
        sampler, drained, busy = await _sampled(
            dsn, interval, peers.pgqueuer_drain_enqueued(dsn, tasks, WORKER_SLOTS, "waits"))
        figures["pgqueuer_16_managers"] = figure(sampler, drained, busy)
    return {"tasks": tasks, "interval_s": interval, "pgqueuer": pgqueuer,
            "figures": figures, "table": table(figures)}


def table(figures: dict[str, Any]) -> str:
    """Markdown: per queue, its rate and busy share, then its most sampled rows."""
    lines = ["| queue | statement | on the CPU or waiting for | samples | share of busy |",
             "|---|---|---|---|---|"]
    for name, f in figures.items():
        head = (f"{name}: {f['tasks_per_s']:,.0f} tasks/s, machine busy "
                f"{f['machine_busy_share']:.0%}" if f["machine_busy_share"] is not None
                else f"{name}: {f['tasks_per_s']:,.0f} tasks/s")
        for i, row in enumerate(f["by_wait"]):
            statement = row["statement"].replace("|", "\\|")
            lines.append(f"| {head if i == 0 else ''} | {statement} | {row['wait']} | "
                         f"{row['samples']:,} | {row['share']:.0%} |")
    return "\n".join(lines)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, "signoff_bench_waits")
    p.add_argument("--tasks", type=positive, default=TASKS, help="tasks a queue (30000)")
    p.add_argument("--interval", type=float, default=INTERVAL,
                   help="seconds between samples (0.003)")
    args = p.parse_args(argv)
    if not 0 < args.interval <= 1:
        p.error("--interval must be more than 0 and at most 1 second")
    return args


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    return await run_in_own_database(
        "what the server waits for during a drain", "bench.waits", argv, args,
        lambda dsn: waits(dsn, args.tasks, args.interval))


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON."""
    report(benchmark, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
