"""A part of the queue on one connection (`connect_single`, store/one_connection.py): what a
`signoff` command runs on. It lends its connection as a pool of one does: one caller at a
time, a transaction left open rolled back, a dead connection replaced; and it makes one
connection where the pool made two."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from taskqueue import DatabaseUnavailable, TaskQueue
from taskqueue.queues.people import PeopleQueue
from taskqueue.store.db import _readable
from tests.taskqueue.store.test_db import UNREACHABLE, _terminate
from tests.taskqueue.worker_helpers import wait_for


async def _connections(admin: psycopg.AsyncConnection[Any]) -> int:
    """The other backends on the test's database now."""
    await admin.execute("SELECT pg_stat_clear_snapshot()")
    cur = await admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid()")
    row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def test_one_connection_serves_the_calls_and_the_schema_check(dsn: str) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as admin:
        async with PeopleQueue.connect_single(dsn) as queue:
            assert await _connections(admin) == 1
            assert await queue.task_list(limit=1) == []
            async with queue.pool.connection() as conn:
                first = conn.info.backend_pid
            await queue.task_list(limit=1)
            async with queue.pool.connection() as conn:
                assert conn.info.backend_pid == first

        async def closed() -> bool:
            return await _connections(admin) == 0

        await wait_for(closed)


async def test_a_part_opened_alone_is_that_part(dsn: str) -> None:
    async with PeopleQueue.connect_single(dsn) as people, \
            TaskQueue.connect_single(dsn) as whole:
        assert type(people) is PeopleQueue and type(whole) is TaskQueue
        task_id = (await whole.task_enqueue("single", {"n": 1})).id
        [seen] = await people.task_list(capability="single")
        assert seen.id == task_id and seen.payload == {"n": 1}


async def test_callers_side_by_side_take_turns(dsn: str) -> None:
    """Two tasks inside transactions at once on one connection would interleave their
    statements; the source lends it to one at a time, as a pool of one does."""
    async with TaskQueue.connect_single(dsn) as queue:
        inside = 0
        most = 0

        async def hold(n: int) -> int:
            nonlocal inside, most
            async with queue._tx() as conn:
                inside += 1
                most = max(most, inside)
                await conn.execute("SELECT pg_sleep(0.05)")
                cur = await conn.execute("SELECT %s::int AS n", (n,))
                row = await cur.fetchone()
                inside -= 1
                assert row is not None
                return int(row["n"])

        got = await asyncio.gather(*(hold(n) for n in range(8)),
                                   *(queue.task_enqueue("turns", {"i": i}) for i in range(8)))
        assert got[:8] == list(range(8))
        assert most == 1
        assert len(await queue.task_list(capability="turns")) == 8


async def test_a_transaction_left_open_is_rolled_back_when_the_connection_returns(
        dsn: str) -> None:
    async with TaskQueue.connect_single(dsn) as queue:
        async with queue.pool.connection() as conn:
            await conn.execute("BEGIN")
            await conn.execute("INSERT INTO capabilities (capability) VALUES ('left_open')")
        async with queue.pool.connection() as conn:
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            cur = await conn.execute("SELECT count(*) AS n FROM capabilities"
                                     " WHERE capability = 'left_open'")
            assert await cur.fetchone() == {"n": 0}
        with pytest.raises(psycopg.errors.UndefinedTable):  # an error inside: rolled back too
            async with queue.pool.connection() as conn:
                await conn.execute("BEGIN")
                await conn.execute("SELECT * FROM no_such_table")
        assert await queue.task_list(limit=1) == []  # and the connection still serves


async def test_a_terminated_connection_is_replaced_at_the_next_call(dsn: str) -> None:
    async with TaskQueue.connect_single(dsn) as queue:
        await queue.task_enqueue("single.dead")
        async with queue.pool.connection() as conn:
            pid = conn.info.backend_pid
            fd = conn.pgconn.socket
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as admin:
            await _terminate(admin, pid)

        async def goodbye() -> bool:  # the server's goodbye reached the socket
            return _readable(fd)

        await wait_for(goodbye)
        await queue.task_enqueue("single.dead")  # no error: a new connection
        async with queue.pool.connection() as conn:
            assert conn.info.backend_pid != pid
        assert len(await queue.task_list(capability="single.dead")) == 2


async def test_a_call_inside_a_call_is_an_error_not_a_wait_forever(dsn: str) -> None:
    async with TaskQueue.connect_single(dsn) as queue, queue.pool.connection():
        with pytest.raises(RuntimeError, match="second connection"):
            async with asyncio.timeout(5):
                await queue.task_list(limit=1)


async def test_an_unreachable_database_is_one_clear_error() -> None:
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        async with TaskQueue.connect_single(UNREACHABLE):
            pass
