"""Where the database is: DATABASE_URL, and one clear error naming host and port when it is down."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskqueue import DatabaseUnavailable, TaskQueue
from taskqueue.store.db import check_pooled, check_reachable, describe, resolve_dsn
from taskqueue.store.migrate import migrate
from tests.taskqueue.worker_helpers import wait_for


def test_resolve_dsn_uses_database_url_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@db.example:6543/x")
    assert resolve_dsn() == "postgresql://u@db.example:6543/x"


@pytest.mark.parametrize(("dsn", "where"), [
    ("postgresql://u@db.example:6543/x", "db.example:6543"),
    ("postgresql://u@127.0.0.1/x", "127.0.0.1:5432"),
    ("host=/run/pg port=5433 dbname=x", "socket /run/pg port 5433"),
])
def test_describe_names_host_and_port(dsn: str, where: str) -> None:
    assert describe(dsn) == where


UNREACHABLE = "postgresql://postgres@127.0.0.1:1/postgres"


async def test_an_unreachable_database_is_one_clear_error() -> None:
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        await check_reachable(UNREACHABLE, timeout=2)
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        async with TaskQueue.connect(UNREACHABLE):
            pass
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        await migrate(UNREACHABLE)


async def test_a_malformed_database_url_is_one_clear_error() -> None:
    with pytest.raises(DatabaseUnavailable, match="not a valid connection string"):
        await check_reachable("host=127.0.0.1 dbname")


async def _terminate(admin: psycopg.AsyncConnection[Any], pid: int) -> None:
    """Terminate a backend and wait until it has exited: the signal alone is asynchronous."""
    await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

    async def exited() -> bool:
        cur = await admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,))
        return await cur.fetchone() is None

    await wait_for(exited)


async def _traced_check(conn: psycopg.AsyncConnection[Any], trace: Path) -> str:
    with trace.open("w") as out:
        conn.pgconn.trace(out.fileno())
        try:
            await check_pooled(conn)
        finally:
            conn.pgconn.untrace()
    return trace.read_text()


async def test_the_pool_check_sends_nothing_on_a_quiet_connection_and_probes_a_dead_one(
        dsn: str, tmp_path: Path) -> None:
    trace = tmp_path / "protocol.trace"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("SELECT 1")
        assert await _traced_check(conn, trace) == ""  # no round trip
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as admin:
            await _terminate(admin, conn.info.backend_pid)
        await asyncio.sleep(0.3)  # the server's goodbye reaches the socket
        with pytest.raises(psycopg.OperationalError):
            await _traced_check(conn, trace)
        assert trace.read_text()  # the full check ran


async def test_a_pool_replaces_a_terminated_connection_without_an_error(dsn: str) -> None:
    async with TaskQueue.connect(dsn, min_size=1, max_size=1) as q:
        await q.task_enqueue("db.check")
        async with q.pool.connection() as conn:
            pid = conn.info.backend_pid
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as admin:
            await _terminate(admin, pid)
        await asyncio.sleep(0.3)
        await q.task_enqueue("db.check")  # lent a fresh connection, not the dead one
        async with q.pool.connection() as conn:
            assert conn.info.backend_pid != pid
