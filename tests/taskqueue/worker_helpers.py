"""Helpers for the runtime tests: a pool running in the test's loop, worker processes, waits."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg

from taskqueue import (
    CapabilityRun,
    Event,
    Handler,
    Reaper,
    Task,
    TaskQueue,
    WorkerConfig,
    WorkerPool,
)
from tests.taskqueue import handlers_for_tests as h
from tests.timing import limit

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = "tests.taskqueue.handlers_for_tests"


def run_of(handler: Handler, capability: str = "demo", lease: float = 30,
           timeout: float | None = None) -> CapabilityRun:
    return CapabilityRun(capability, handler, lease, timeout)


@asynccontextmanager
async def running_pool(queue: TaskQueue, *runs: CapabilityRun, concurrency: int = 1,
                       poll_interval: float = 0.1, grace: float = 5,
                       name: str = "w-test", answer_slots: int = 1) -> AsyncIterator[WorkerPool]:
    """A WorkerPool running in this loop; stopped (gracefully) on exit."""
    h.SEEN.clear()
    pool = WorkerPool(queue, runs, WorkerConfig(concurrency=concurrency,
                                                poll_interval=poll_interval, grace=grace,
                                                name=name, answer_slots=answer_slots))
    runner = asyncio.create_task(pool.run())
    try:
        yield pool
    finally:
        pool.stop()
        await asyncio.wait_for(runner, 30)


async def wait_for(check: Callable[[], Awaitable[Any]], timeout: float | None = None,
                   every: float = 0.05) -> Any:
    """Poll `check` until it returns something truthy; its value. The limit is the suite's
    (tests/timing.py): a wait for what must happen never fails because the machine is busy."""
    timeout = limit(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {check}")
        await asyncio.sleep(every)


async def wait_status(queue: TaskQueue, task_id: int, *statuses: str,
                      timeout: float | None = None) -> Task:
    async def check() -> Task | None:
        task = await queue.task_get(task_id)
        return task if task.status in statuses else None

    result: Task = await wait_for(check, timeout)
    return result


async def lapse_and_reap(queue: TaskQueue, where: str = "status = 'running'") -> int:
    """A worker's lease lapses and the reaper puts its task back: how many it requeued.

    The holder may be alive (a test that plays a stalled worker): its heartbeat can renew the
    lease between the two statements, so both run again until the reaper takes something."""
    async def reaped() -> int:
        async with queue.pool.connection() as conn:
            await conn.execute(  # type: ignore[call-overload]
                "UPDATE tasks SET lease_expires_at = now() - interval '1 second' "
                f"WHERE {where}")
        return (await Reaper(queue).run_once()).requeued

    found: int = await wait_for(reaped)
    return found


async def events(queue: TaskQueue, task_id: int, kind: str | None = None) -> list[Event]:
    found = (await queue.task_detail(task_id)).events
    return [e for e in found if kind is None or e.kind == kind]


def spawn_worker(dsn: str, capability: str, handler: str, *args: str,
                 log: Path) -> subprocess.Popen[bytes]:
    """`python -m taskqueue worker …` in its own process, its output in `log`."""
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1"}
    env.pop("SIGNOFF_CONFIG", None)
    cmd = [sys.executable, "-m", "taskqueue", "worker", "--capability", capability,
           "--handler", f"{HANDLERS}:{handler}", *args]
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def terminate_backends(dsn: str) -> int:
    """pg_terminate_backend every connection to this test's database."""
    from tests.conftest import ADMIN_DSN

    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        cur = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()", (name,))
        row = cur.fetchone()
    return int(row[0]) if row else 0


def done_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.endswith(" done")] \
        if path.exists() else []


def set_connections(dsn: str, *, allowed: bool) -> None:
    """Refuse (or accept again) new connections to this test's database, as a down server."""
    from tests.conftest import ADMIN_DSN

    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {str(allowed).lower()}')


def listener_backends(dsn: str) -> list[int]:
    """The pids of this test database's 'signoff-listener' connections."""
    from tests.conftest import ADMIN_DSN

    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s "
            "AND application_name = 'signoff-listener' ORDER BY pid", (name,)).fetchall()
    return [int(r[0]) for r in rows]


def terminate_listener(dsn: str) -> int:
    """pg_terminate_backend the test database's listener connections; how many."""
    from tests.conftest import ADMIN_DSN

    pids = listener_backends(dsn)
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return len(pids)
