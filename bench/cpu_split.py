"""Where a drained task's CPU goes: the client's and the database server's, per task, for
Signoff and its peers side by side (issue 26, goals 1 to 3 and 5: why a ratio stays where it
is), printed as JSON with a Markdown table.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.cpu_split                  # 3,000 tasks a figure, 3 repetitions
    .venv/bin/python -m bench.cpu_split --tasks 500 --repeat 1

Three pairs, interleaved (repetition 1 of each, then 2, ...), each on tasks enqueued before
its clocks start:
- one task a call: Signoff's `task_claim` + `task_complete` against the two-statement
  reference queue, one claimer each;
- batch 10, one claimer: `task_claim_many` + `task_settle_many` against one PgQueuer
  QueueManager (asyncpg, batch 10);
- `signoff worker --concurrency 16` (a process of its own) against 16 QueueManagers.

Each figure drains a quarter of `--tasks`, then `--tasks`: a task's share is the difference
over the difference in tasks, so what a drain pays once (connecting, the worker process's
start-up, the exactly-once check) drops out and is reported apart (`*_fixed_ms`).
Client CPU is this process's (`time.process_time`) plus the worker process's
(`getrusage(RUSAGE_CHILDREN)`, once it has exited). Server CPU is the whole PostgreSQL
cluster's: the postmaster's own, its exited children's (`cutime` + `cstime`) and its
running children's, read from /proc; it needs the server on this machine and /proc
readable, and is null otherwise. Autovacuum and the checkpointer count too, when they run.
Medians of the repetitions; ratios are Signoff's figure over its peer's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg

from bench import peers
from bench.compare import CLAIM_BATCH, worker_process_run
from bench.database import database_options, run_in_own_database
from bench.drain import drain
from bench.measure import enqueue_ids, positive, report
from taskqueue import TaskQueue

TASKS = 3000
REPEAT = 3
WORKER_SLOTS = 16
_TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command (field 3, the state, is index 0)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text.rsplit(")", 1)[1].split()


def postmaster_children(postmaster: int) -> dict[int, float]:
    """The postmaster's running children and the CPU seconds each has used."""
    found: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(int(entry.name))
        except OSError:  # it exited meanwhile, or is not ours to read
            continue
        if int(fields[1]) == postmaster:
            found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICK
    return found


class ClusterCpu:
    """CPU seconds the PostgreSQL cluster has used: the postmaster's own, its exited
    children's (added to its cutime and cstime once it has waited for them) and its running
    children's. A reading waits until the server processes started since the first reading
    have exited and been waited for, so none is counted twice or missed."""

    def __init__(self, postmaster: int) -> None:
        self.postmaster = postmaster
        self.lasting = set(postmaster_children(postmaster))

    async def seconds(self, timeout: float = 10) -> float:
        deadline = time.monotonic() + timeout
        while True:
            # The children first: one that has gone by then was already waited for, so
            # the postmaster's own figures, read next, include it.
            children = postmaster_children(self.postmaster)
            own = _stat_fields(self.postmaster)
            if set(children) <= self.lasting or time.monotonic() > deadline:
                return sum(int(f) for f in own[11:15]) / _TICK + sum(children.values())
            await asyncio.sleep(0.05)


async def postmaster_pid(dsn: str) -> int | None:
    """The server's postmaster, when it runs on this machine and /proc shows it."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
        # Read while the connection is open: its server process exits once it closes.
        try:
            status = Path(f"/proc/{row[0] if row else 0}/status").read_text()
        except OSError:
            return None
    parent = next((int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("PPid:")), None)
    if parent is None or not Path(f"/proc/{parent}/stat").exists():
        return None
    return parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


Run = Callable[[int], Awaitable[dict[str, Any]]]


async def measured(cluster: ClusterCpu | None, tasks: int, run: Run) -> dict[str, Any]:
    """One drain of `tasks` tasks: its wall, client and server seconds, and its check."""
    server = await cluster.seconds() if cluster else None
    client, children, wall = time.process_time(), _children_cpu(), time.perf_counter()
    found = await run(tasks)
    wall = time.perf_counter() - wall
    client = time.process_time() - client + _children_cpu() - children
    if server is not None and cluster is not None:
        server = await cluster.seconds() - server
    return {"tasks": tasks, "wall_s": wall, "client_cpu_s": client, "server_cpu_s": server,
            "exactly_once": bool(found["exactly_once"])}


def marginal(small: dict[str, Any], big: dict[str, Any]) -> dict[str, Any]:
    """Per task (µs) from two drains of different sizes: the difference over the
    difference in tasks, so what every drain pays once (connecting, a worker process's
    start-up, the exactly-once check) drops out; and that once-paid part (ms)."""
    extra = big["tasks"] - small["tasks"]
    out: dict[str, Any] = {"exactly_once": small["exactly_once"] and big["exactly_once"]}
    for field in ("wall", "client_cpu", "server_cpu"):
        a, b = small[f"{field}_s"], big[f"{field}_s"]
        if a is None or b is None:
            out[f"{field}_us"] = out[f"{field}_fixed_ms"] = None
            continue
        per_task = (b - a) / extra
        out[f"{field}_us"] = round(per_task * 1e6, 1)
        out[f"{field}_fixed_ms"] = round((a - per_task * small["tasks"]) * 1e3, 1)
    return out


async def repetition(dsn: str, q: TaskQueue, cluster: ClusterCpu | None, tasks: int,
                     rep: int, pgqueuer: bool) -> dict[str, dict[str, Any]]:
    """One repetition of every figure, each drained at a quarter of `tasks` and at `tasks`,
    on work enqueued before its clocks start."""
    drains: dict[str, Callable[[str, int], Awaitable[Run]]] = {}

    async def signoff(batch: int, name: str, n: int) -> Run:
        ids = await enqueue_ids(q, name, n, 1000)
        return lambda count: drain(dsn, name, ids, 1, batch=batch)

    async def reference(name: str, n: int) -> Run:
        await peers.reference_enqueue(dsn, n, name)
        return lambda count: peers.reference_drain_enqueued(dsn, count, 1, name)

    async def worker(name: str, n: int) -> Run:
        await enqueue_ids(q, name, n, 1000)
        return lambda count: worker_process_run(dsn, name, count, WORKER_SLOTS)

    def pgqueuer_managers(managers: int) -> Callable[[str, int], Awaitable[Run]]:
        async def prepare(name: str, n: int) -> Run:
            await peers.pgqueuer_enqueue(dsn, n, 1000, name)
            return lambda count: peers.pgqueuer_drain_enqueued(dsn, count, managers, name)
        return prepare

    drains["one_a_call.signoff"] = lambda name, n: signoff(1, name, n)
    drains["one_a_call.reference"] = reference
    drains["batch.signoff"] = lambda name, n: signoff(CLAIM_BATCH, name, n)
    drains["worker.signoff"] = worker
    if pgqueuer:
        drains["batch.pgqueuer"] = pgqueuer_managers(1)
        drains["worker.pgqueuer"] = pgqueuer_managers(WORKER_SLOTS)
    out: dict[str, dict[str, Any]] = {}
    for figure, prepare in drains.items():
        runs = []
        for n in (max(1, tasks // 4), tasks):
            name = f"cpu.{figure}.{rep}.{n}"
            runs.append(await measured(cluster, n, await prepare(name, n)))
        out[figure] = marginal(*runs)
    return out


PAIRS = (("one_a_call", "reference"), ("batch", "pgqueuer"), ("worker", "pgqueuer"))
FIELDS = ("wall_us", "client_cpu_us", "server_cpu_us")
FIXED = ("wall_fixed_ms", "client_cpu_fixed_ms", "server_cpu_fixed_ms")


def medians(reps: Sequence[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Each figure's median per field over the repetitions, and whether every drain was
    exactly once."""
    out: dict[str, dict[str, Any]] = {}
    for name in reps[0]:
        runs = [r[name] for r in reps]
        out[name] = {f: _median([r[f] for r in runs]) for f in FIELDS + FIXED}
        out[name]["exactly_once"] = all(r["exactly_once"] for r in runs)
    return out


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 1) if known else None


def ratios(figures: dict[str, dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Signoff's per-task figure over its peer's, for each pair both sides of which ran."""
    out: dict[str, dict[str, float | None]] = {}
    for kind, peer in PAIRS:
        ours, theirs = figures.get(f"{kind}.signoff"), figures.get(f"{kind}.{peer}")
        if ours is None or theirs is None:
            continue
        out[f"{kind}.signoff_over_{peer}"] = {
            f: (round(ours[f] / theirs[f], 2) if ours[f] and theirs[f] else None)
            for f in FIELDS}
    return out


def table(figures: dict[str, dict[str, Any]]) -> str:
    """The medians as a Markdown table, microseconds per task."""
    lines = ["| figure | wall µs/task | client CPU µs/task | server CPU µs/task |",
             "|---|---|---|---|"]
    for name, f in figures.items():
        cells = " | ".join("–" if f[k] is None else f"{f[k]:,.0f}" for k in FIELDS)
        lines.append(f"| {name} | {cells} |")
    return "\n".join(lines)


async def cpu_split(dsn: str, tasks: int, repeat: int) -> dict[str, Any]:
    """Every figure `repeat` times, interleaved; the medians, the ratios and the table."""
    postmaster = await postmaster_pid(dsn)
    pgqueuer = peers.pgqueuer_available()
    if pgqueuer:
        await peers.pgqueuer_install(dsn)
    reps = []
    async with TaskQueue.connect(dsn, min_size=1, max_size=1) as q:
        # After the pool's connection exists: it lasts, and is counted while it runs.
        cluster = ClusterCpu(postmaster) if postmaster else None
        for rep in range(repeat):
            reps.append(await repetition(dsn, q, cluster, tasks, rep, pgqueuer))
    figures = medians(reps)
    return {"server_cpu": "the cluster's, from /proc" if postmaster else
            "unknown: the server is not on this machine or /proc does not show it",
            "pgqueuer": pgqueuer, "repetitions": reps, "figures": figures,
            "ratios": ratios(figures), "table": table(figures)}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, "signoff_bench_cpu")
    p.add_argument("--tasks", type=positive, default=TASKS, help="tasks a figure (3000)")
    p.add_argument("--repeat", type=positive, default=REPEAT, help="repetitions (3)")
    return p.parse_args(argv)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    return await run_in_own_database(
        "signoff CPU per task, client and server", "bench.cpu_split", argv, args,
        lambda dsn: cpu_split(dsn, args.tasks, args.repeat))


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON."""
    report(benchmark, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
