"""One connection lent the way a pool lends one, for a process that makes a few calls and
exits (a `signoff` command).

A pool costs such a process a second connection (the server's check connects first) and
the pool's background tasks, for one or two statements: about a fifth of what `signoff ls`
took (issue 44's CLI start-up). This source keeps the checked connection and lends it to
one caller at a time, as a pool of one does: a transaction left open is rolled back when
it comes back, and a connection found broken is replaced at the next call (a failover
between two calls of one command)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from taskqueue.store.base import Conn
from taskqueue.store.db import check_pooled, connect_checked, connection_kwargs

# Seconds a reconnection waits for the server, as the first connection's check does.
CONNECT_TIMEOUT = 5


class OneConnection:
    """The connection source of a part of the queue opened with `connect_single`
    (queues/shared.py)."""

    def __init__(self, conn: Conn, conninfo: str, kwargs: dict[str, Any]) -> None:
        self.conninfo = conninfo
        self._conn: Conn | None = conn
        self._kwargs = kwargs
        self._lock = asyncio.Lock()
        self._holder: asyncio.Task[Any] | None = None

    @classmethod
    async def open(cls, dsn: str) -> OneConnection:
        """Connect to `dsn` as a pool's connections are made (db.connection_kwargs), the
        server checked (db.connect_checked); no prepared statements when that check found a
        pooler in between."""
        conn = await connect_checked(dsn, CONNECT_TIMEOUT, **connection_kwargs(dsn))
        kwargs = connection_kwargs(dsn)  # now the check has found whether a pooler is between
        if "prepare_threshold" in kwargs:
            conn.prepare_threshold = kwargs["prepare_threshold"]
        return cls(conn, dsn, kwargs)

    @asynccontextmanager
    async def connection(self, timeout: float | None = None) -> AsyncIterator[Conn]:
        """The connection, to one caller at a time (`timeout`, the pool's, is not used:
        the caller before has it for one call)."""
        if self._holder is not None and self._holder is asyncio.current_task():
            # A pool of one would wait for itself until its timeout; say so at once.
            raise RuntimeError("a call asked for a second connection while holding the one")
        async with self._lock:
            self._holder = asyncio.current_task()
            try:
                conn = self._conn = await self._usable(self._conn)
                try:
                    yield conn
                finally:
                    await self._returned(conn)
            finally:
                self._holder = None

    async def _usable(self, conn: Conn | None) -> Conn:
        """`conn` if it still works (the pool's own check: db.check_pooled), else a new
        connection: the server may have restarted, or failed over, since the last call."""
        if conn is not None and not conn.closed and not conn.broken:
            try:
                await check_pooled(conn)
                return conn
            except psycopg.Error:
                await conn.close()
        return await psycopg.AsyncConnection.connect(
            self.conninfo, connect_timeout=CONNECT_TIMEOUT, **self._kwargs)

    async def _returned(self, conn: Conn) -> None:
        """As psycopg_pool takes a connection back: rolled back if left in a transaction,
        dropped if its state is unknown (the next call connects again)."""
        status = conn.info.transaction_status
        if status == TransactionStatus.IDLE or conn.closed:
            return
        if status == TransactionStatus.UNKNOWN:
            await conn.close()
            return
        try:
            await conn.rollback()
        except psycopg.Error:
            await conn.close()

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
