"""Approve → resume: how soon an idle, listening worker resumes a task after its approval
(issue 13, goal 5: p99 < 250 ms over 200 approvals), printed as JSON.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.resume                    # 200 approvals
    .venv/bin/python -m bench.resume --approvals 20     # a short run

It drops and recreates its own database (`--database`, default signoff_bench_resume) and
starts one real `signoff worker` process (`python -m taskqueue worker`, one slot, handler
`bench.handlers:approval_resume`) that polls only every `--poll-interval` seconds, so a
resume that missed its NOTIFY shows as a long one. Then, one approval at a time: enqueue a
task, wait until the worker parked it, let the worker idle for `--settle` seconds, approve
through `TaskQueue.approval_decide` (the call the Telegram bot's buttons make) and wait
until the task succeeded. Each latency runs from just before the approve call to the
handler's own timestamp when it resumed; both are `time.time()`, the wall clock of this
machine, which the worker process shares.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench.database import ADMIN_DSN, in_own_database, machine_info, machine_load
from bench.measure import execute, latency_ms
from taskqueue import Decision, Status, Task, TaskQueue

log = logging.getLogger("signoff.bench")

ROOT = Path(__file__).resolve().parents[1]
CAPABILITY = "bench.resume"
HANDLER = "bench.handlers:approval_resume"
# Defaults: approvals (the goal is over 200); the worker's polling fallback, long so
# that only NOTIFY makes a resume quick; how long the worker idles before each approve.
APPROVALS = 200
POLL_INTERVAL = 30.0
SETTLE = 0.05
# The goal, and how long one step may take before the run is given up (seconds).
GOAL_P99_MS = 250.0
STEP_TIMEOUT = 30.0
CLOCK = "time.time() of this machine: before the approve call, and in the handler on resume"

T = TypeVar("T")


async def until(check: Callable[[], Awaitable[T | None]], what: str,
                timeout: float = STEP_TIMEOUT) -> T:
    """Poll `check` every few milliseconds until it returns something; that."""
    deadline = time.monotonic() + timeout
    while (value := await check()) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")
        await asyncio.sleep(0.005)
    return value


async def _listening(dsn: str) -> bool | None:
    row = await execute(dsn, "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = "
                             "current_database() AND application_name = 'signoff-listener'")
    return True if row["n"] else None


@contextlib.asynccontextmanager
async def worker_process(dsn: str, poll_interval: float) -> AsyncIterator[None]:
    """A real `signoff worker` for the capability, listening before this yields; its
    output goes to stderr when something failed."""
    cmd = [sys.executable, "-m", "taskqueue", "worker", "--capability", CAPABILITY,
           "--handler", HANDLER, "--poll-interval", str(poll_interval)]
    env = {**os.environ, "DATABASE_URL": dsn}
    env.pop("SIGNOFF_CONFIG", None)
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            await until(lambda: _listening(dsn), "the worker's LISTEN connection")
            yield
        except BaseException:
            out.seek(0)
            sys.stderr.write(out.read().decode(errors="replace")[-4000:])
            raise
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            await asyncio.to_thread(proc.wait, 30)


async def _in_status(q: TaskQueue, task_id: int, status: Status) -> Task | None:
    task = await q.task_get(task_id)
    if task.status in (Status.FAILED, Status.CANCELLED, Status.EXPIRED):
        raise RuntimeError(f"task {task_id} ended {task.status}: {task.last_error}")
    return task if task.status is status else None


async def one_approval(q: TaskQueue, i: int, settle: float) -> tuple[float, float]:
    """Park a task, approve it once the worker idles; (approve → resume, approve call)
    in seconds."""
    enq = await q.task_enqueue(CAPABILITY, {"i": i})
    await until(lambda: _in_status(q, enq.id, Status.NEEDS_APPROVAL), f"task {enq.id} to park")
    approval = (await q.task_detail(enq.id)).approvals[-1]
    await asyncio.sleep(settle)  # the slot's claim found nothing and waits for a wake-up
    started = time.time()
    await q.approval_decide(approval.id, Decision.APPROVED, "bench")
    called = time.time() - started
    done = await until(lambda: _in_status(q, enq.id, Status.SUCCEEDED),
                       f"task {enq.id} to resume")
    assert isinstance(done.result, dict)
    return float(done.result["resumed_at"]) - started, called


async def approve_resume(dsn: str, approvals: int = APPROVALS, *,
                         poll_interval: float = POLL_INTERVAL,
                         settle: float = SETTLE) -> dict[str, Any]:
    """The figure, on the migrated database at `dsn`: approve → resume and the approve
    call's own time, p50/p95/p99/max in ms, and whether p99 met the goal."""
    async with worker_process(dsn, poll_interval), \
            TaskQueue.connect(dsn, min_size=1, max_size=2) as q:
        samples = [await one_approval(q, i, settle) for i in range(approvals)]
    resumes = [s[0] for s in samples]
    figure = latency_ms(resumes)
    return {"approvals": approvals, "clock": CLOCK,
            "worker": {"concurrency": 1, "poll_interval": poll_interval, "settle": settle},
            "approve_to_resume": {**figure, "min_ms": round(min(resumes) * 1000, 3)},
            "approve_call": latency_ms([s[1] for s in samples]),
            "goal": f"p99 < {GOAL_P99_MS:g} ms",
            "met": figure["p99_ms"] is not None and figure["p99_ms"] < GOAL_P99_MS}


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--dsn", default=ADMIN_DSN, help="admin DSN used to create the database")
    p.add_argument("--database", default="signoff_bench_resume", help="dropped and recreated")
    p.add_argument("--keep", action="store_true", help="keep the database afterwards")
    p.add_argument("--approvals", type=_count, default=APPROVALS, help="approvals timed (200)")
    p.add_argument("--poll-interval", type=float, default=POLL_INTERVAL,
                   help="the worker's polling fallback in seconds (30)")
    p.add_argument("--settle", type=float, default=SETTLE,
                   help="seconds the worker idles before each approve (0.05)")
    return p.parse_args(argv)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    started = time.perf_counter()

    async def measure(dsn: str) -> dict[str, Any]:
        machine = await machine_info(dsn)
        figure = await approve_resume(dsn, args.approvals, poll_interval=args.poll_interval,
                                      settle=args.settle)
        machine["load_average_end"] = machine_load()
        return {"machine": machine, **figure}

    doc = await in_own_database(args.dsn, args.database, args.keep, measure)
    return {"benchmark": "signoff approve → resume",
            "command": shlex.join(["python", "-m", "bench.resume", *argv]),
            "database": args.database, **doc,
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON; 0 even when the goal is not met (see `met`)."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    doc = asyncio.run(benchmark(sys.argv[1:] if argv is None else list(argv)))
    print(json.dumps(doc, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
