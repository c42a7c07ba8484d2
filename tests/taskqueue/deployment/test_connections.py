"""A worker against a server with a small max_connections, all of them taken by others: it waits,
tries again (at most a second apart), logs one line, and loses nothing once a slot frees."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg
import pytest

from taskqueue import NewTask, TaskQueue, migrate
from tests.replication import private_server
from tests.taskqueue import handlers_for_tests as h

from ..worker_helpers import run_of, running_pool, wait_status

pytestmark = pytest.mark.slow

FULL = "max_connections = 8\nsuperuser_reserved_connections = 0\n"


def _fill(dsn: str) -> list[psycopg.Connection]:
    """Connections taking every free slot of the server (as other clients would)."""
    taken: list[psycopg.Connection] = []
    while True:
        try:
            taken.append(psycopg.connect(dsn, autocommit=True, connect_timeout=2))
        except psycopg.OperationalError as exc:
            assert "too many clients" in str(exc), exc
            return taken


def _count(conn: psycopg.Connection, sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


async def test_a_worker_on_a_full_server_waits_logs_one_line_and_loses_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    with private_server(FULL) as dsn:
        await migrate(dsn)
        async with TaskQueue.connect(dsn, min_size=1, max_size=4) as queue:
            await queue.task_enqueue_many("mail", [NewTask({"n": n}) for n in range(20)])
            async with queue.pool.connection() as conn:
                pid = conn.info.backend_pid
            taken = _fill(dsn)
            try:
                # Another client gets the worker's own connection's slot as well.
                taken[0].execute("SELECT pg_terminate_backend(%s)", (pid,))
                for _ in range(50):
                    taken += _fill(dsn)
                    if _count(taken[0], "SELECT count(*) FROM pg_stat_activity WHERE "
                                        f"pid = {pid}") == 0:
                        break
                caplog.set_level(logging.INFO, logger="signoff")
                async with running_pool(queue, run_of(h.quick, "mail"), concurrency=4,
                                        poll_interval=0.2):
                    await asyncio.sleep(4)  # the server is full: nothing can run
                    assert _count(taken[0], "SELECT count(*) FROM tasks "
                                            "WHERE status = 'succeeded'") == 0
                    for conn in taken:
                        conn.close()
                    taken = []
                    async with queue.pool.connection() as conn:
                        cur = await conn.execute("SELECT id FROM tasks")
                        ids = [r["id"] for r in await cur.fetchall()]
                    for task_id in ids:
                        await wait_status(queue, task_id, "succeeded")
            finally:
                for conn in taken:
                    with contextlib.suppress(psycopg.Error):
                        conn.close()
            async with queue.pool.connection() as conn:
                cur = await conn.execute("SELECT task_id, count(*) AS n FROM task_events "
                                         "WHERE kind = 'completed' GROUP BY task_id")
                done = await cur.fetchall()
    assert len(done) == 20 and {r["n"] for r in done} == {1}
    said = [r.getMessage() for r in caplog.records
            if r.name.startswith("signoff") and r.levelno >= logging.WARNING]
    assert len(said) == 1, said
    assert "too many clients" in said[0]
