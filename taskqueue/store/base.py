"""The base of every part of the queue (taskqueue/queues/): its pool, one transaction per call,
and running named queries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import psycopg
from psycopg import AsyncConnection, AsyncCursor
from psycopg.pq import TransactionStatus
from psycopg.types.json import Jsonb

from taskqueue.store import rows
from taskqueue.store.checks import DEFAULT_LIMITS, Limits, check_json
from taskqueue.store.models import Approval, Attachment
from taskqueue.store.queries import query
from taskqueue.store.schema_guard import newer_schema, refuse_newer

TASKS_CHANNEL = "signoff_tasks"
APPROVALS_CHANNEL = "signoff_approvals"
# A person answered a task of the capability in the payload (approved or revised): a worker
# whose slots are all busy runs it in its answer slot (runtime/worker.py).
ANSWERS_CHANNEL = "signoff_answers"

Conn = AsyncConnection[dict[str, Any]]


class ConnectionSource(Protocol):
    """Where a queue's calls get their connection: psycopg_pool's AsyncConnectionPool, or a
    short-lived process's one connection (store/one_connection.py)."""

    conninfo: Any  # the DSN, or a callable computing it (a pool's may be)

    def connection(self, timeout: float | None = None) -> AbstractAsyncContextManager[Conn]:
        """A connection lent for one call, taken back after it."""
        ...


def jsonb(value: Any, what: str = "a JSON value", limits: Limits = DEFAULT_LIMITS
          ) -> Jsonb | None:
    """A value for a jsonb parameter (None stays NULL); BadInput when jsonb cannot store it
    or it is past `limits`."""
    if value is None:
        return None
    check_json(value, what, limits)
    return Jsonb(value)


class Pipelined:
    """A pipelined transaction's connection (QueueBase._pipelined_tx)."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.committed = False

    async def commit(self) -> None:
        """Send COMMIT after what was sent so far; it goes out with the next fetch."""
        await self.conn.execute("COMMIT", prepare=False)
        self.committed = True


class QueueBase:
    """What every part of the queue shares; only these helpers execute SQL."""

    def __init__(self, pool: ConnectionSource, *,
                 max_attachment_bytes: int = DEFAULT_LIMITS.max_attachment_bytes,
                 max_json_bytes: int = DEFAULT_LIMITS.max_json_bytes,
                 max_json_depth: int = DEFAULT_LIMITS.max_json_depth) -> None:
        self.pool = pool
        self.limits = Limits(max_json_bytes=max_json_bytes, max_json_depth=max_json_depth,
                             max_attachment_bytes=max_attachment_bytes)
        # The database's newest migration when this client does not know it (found at
        # connect): deciding, claiming and parking are then refused (store/schema_guard.py).
        self.schema_newer: str | None = None

    def schema_check_writable(self) -> None:
        """SchemaTooNew when a newer Signoff migrated this database: this client may read
        it, and never decides, claims or parks (a worker checks this at start)."""
        refuse_newer(self.schema_newer)

    async def _check_schema(self) -> None:
        """Note whether a newer Signoff migrated this database (once, at connect)."""
        async with self.pool.connection() as conn:
            self.schema_newer = await newer_schema(conn)

    @property
    def max_attachment_bytes(self) -> int:
        return self.limits.max_attachment_bytes

    def _jsonb(self, value: Any, what: str) -> Jsonb | None:
        """A user's JSON value (payload, state, result, request) under this queue's limits."""
        return jsonb(value, what, self.limits)

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Conn]:
        async with self.pool.connection() as conn, conn.transaction():
            yield conn

    @asynccontextmanager
    async def _pipelined_tx(self) -> AsyncIterator[Pipelined]:
        """A transaction in pipeline mode, for a call whose latency a person waits on.

        BEGIN, and every statement sent after it, go out together; a round trip is paid
        only where a result is fetched. A body that sends its last statements, then
        `commit()`, then fetches their results pays one round trip for all of that. The
        server runs the statements in the order sent; an error surfaces at the next fetch
        or at the end, and the transaction is then rolled back. (psycopg's own transaction
        block syncs after BEGIN and twice around COMMIT: three round trips more.)"""
        async with self.pool.connection() as conn:
            try:
                async with conn.pipeline():
                    await conn.execute("BEGIN", prepare=False)
                    tx = Pipelined(conn)
                    yield tx
                    if not tx.committed:
                        await tx.commit()
            finally:
                if conn.info.transaction_status != TransactionStatus.IDLE:
                    await conn.rollback()

    @staticmethod
    async def _send(conn: Conn, name: str, params: Mapping[str, Any]) -> AsyncCursor[Any]:
        """Send a named query; its rows are fetched from the cursor when needed."""
        return await conn.execute(query(name), params)

    @staticmethod
    async def _all_unprepared(conn: Conn, sql: str, params: Mapping[str, Any]
                              ) -> list[dict[str, Any]]:
        """Rows of a statement composed from named blocks, planned for these parameters
        each time (never a prepared, generic plan)."""
        cur = await conn.execute(sql, params, prepare=False)
        return await cur.fetchall()

    @staticmethod
    async def _one(conn: Conn, name: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        cur = await conn.execute(query(name), params)
        return await cur.fetchone()

    @staticmethod
    async def _plan_settings(conn: Conn, *, parallel: bool = True,
                             work_mem: str | None = None) -> None:
        """How the rest of this transaction plans, in one statement, and only it (set_config's
        `true`: the pool's next caller keeps the server's settings). No JIT, for a query
        whose plan costs past jit_above_cost while it runs in milliseconds or reads its rows
        once: compiling costs more than it saves. `parallel=False`: no parallel workers
        either, for a read of a few rows, which starting them would take longer than.
        `work_mem`: that much memory for each sort, for a report whose sorts would otherwise
        spill to disk."""
        settings = ["set_config('jit', 'off', true)"]
        if not parallel:
            settings.append("set_config('max_parallel_workers_per_gather', '0', true)")
        params: tuple[str, ...] = ()
        if work_mem is not None:
            settings.append("set_config('work_mem', %s, true)")
            params = (work_mem,)
        await conn.execute("SELECT " + ", ".join(settings), params)

    @asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[Conn]:
        """A read-only transaction whose queries all see one snapshot (REPEATABLE READ)."""
        async with self._tx() as conn:
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield conn

    @staticmethod
    async def _all(conn: Conn, name: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The query's rows; none for a statement that returns no rows."""
        cur = await conn.execute(query(name), params)
        try:
            # Fetch first: in pipeline mode the result (and so its description) arrives
            # only when fetched.
            return await cur.fetchall()
        except psycopg.ProgrammingError:
            if cur.pgresult is not None and cur.description is None:
                return []
            raise

    async def _notify(self, conn: Conn, channel: str, payload: str) -> None:
        await conn.execute(query("notify"), {"channel": channel, "payload": payload})

    async def _latest_approvals(self, conn: Conn, task_ids: list[int]) -> dict[int, Approval]:
        found = await self._all(conn, "approval_latest_many", {"task_ids": task_ids})
        return {a.task_id: a for a in await self._approvals(conn, found)}

    async def _approvals(self, conn: Conn, found: list[dict[str, Any]]) -> list[Approval]:
        """Approval rows as models with their attachments' metadata and their approves."""
        parts = await self._send_approval_parts(conn, [r["id"] for r in found])
        return await self._approval_models(found, parts)

    async def _send_approval_parts(self, conn: Conn, approval_ids: list[int]
                                   ) -> tuple[AsyncCursor[Any], AsyncCursor[Any]] | None:
        """Send the reads of the approvals' attachments and approves, both before either is
        fetched (one round trip in a pipelined transaction)."""
        if not approval_ids:
            return None
        params = {"approval_ids": approval_ids}
        return (await self._send(conn, "attachment_list_many", params),
                await self._send(conn, "approval_votes_many", params))

    @staticmethod
    async def _approval_models(found: list[dict[str, Any]],
                               parts: tuple[AsyncCursor[Any], AsyncCursor[Any]] | None
                               ) -> list[Approval]:
        files: dict[int, list[Attachment]] = {}
        votes: dict[int, list[dict[str, Any]]] = {}
        if parts is not None:
            for r in await parts[0].fetchall():
                files.setdefault(r["approval_id"], []).append(rows.attachment_from_row(r))
            votes = _by_approval(await parts[1].fetchall())
        return [rows.approval_from_row(r, files.get(r["id"], ()), votes.get(r["id"], ()))
                for r in found]


def _by_approval(found: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for r in found:
        out.setdefault(r["approval_id"], []).append(r)
    return out
