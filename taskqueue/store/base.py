"""The base of TaskQueue: its pool, one transaction per call, and running named queries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from taskqueue.store import rows
from taskqueue.store.checks import DEFAULT_LIMITS, Limits, check_json
from taskqueue.store.models import Approval, Attachment
from taskqueue.store.queries import query

TASKS_CHANNEL = "signoff_tasks"
APPROVALS_CHANNEL = "signoff_approvals"
# A person answered a task of the capability in the payload (approved or revised): a worker
# whose slots are all busy runs it in its answer slot (runtime/worker.py).
ANSWERS_CHANNEL = "signoff_answers"

Conn = AsyncConnection[dict[str, Any]]


def jsonb(value: Any, what: str = "a JSON value", limits: Limits = DEFAULT_LIMITS
          ) -> Jsonb | None:
    """A value for a jsonb parameter (None stays NULL); BadInput when jsonb cannot store it
    or it is past `limits`."""
    if value is None:
        return None
    check_json(value, what, limits)
    return Jsonb(value)


class QueueBase:
    """What every part of TaskQueue shares; only these helpers execute SQL."""

    def __init__(self, pool: AsyncConnectionPool[Conn], *,
                 max_attachment_bytes: int = DEFAULT_LIMITS.max_attachment_bytes,
                 max_json_bytes: int = DEFAULT_LIMITS.max_json_bytes,
                 max_json_depth: int = DEFAULT_LIMITS.max_json_depth) -> None:
        self.pool = pool
        self.limits = Limits(max_json_bytes=max_json_bytes, max_json_depth=max_json_depth,
                             max_attachment_bytes=max_attachment_bytes)

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

    @staticmethod
    async def _one(conn: Conn, name: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        cur = await conn.execute(query(name), params)
        return await cur.fetchone()

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
        return await cur.fetchall() if cur.description else []

    async def _notify(self, conn: Conn, channel: str, payload: str) -> None:
        await conn.execute(query("notify"), {"channel": channel, "payload": payload})

    async def _latest_approvals(self, conn: Conn, task_ids: list[int]) -> dict[int, Approval]:
        found = await self._all(conn, "approval_latest_many", {"task_ids": task_ids})
        return {a.task_id: a for a in await self._approvals(conn, found)}

    async def _approvals(self, conn: Conn, found: list[dict[str, Any]]) -> list[Approval]:
        """Approval rows as models with their attachments' metadata and their approves."""
        ids = [r["id"] for r in found]
        files = await self._attachments(conn, ids)
        votes = await self._votes(conn, ids)
        return [rows.approval_from_row(r, files.get(r["id"], ()), votes.get(r["id"], ()))
                for r in found]

    async def _votes(self, conn: Conn, approval_ids: list[int]
                     ) -> dict[int, list[dict[str, Any]]]:
        out: dict[int, list[dict[str, Any]]] = {}
        if approval_ids:
            for r in await self._all(conn, "approval_votes_many", {"approval_ids": approval_ids}):
                out.setdefault(r["approval_id"], []).append(r)
        return out

    async def _attachments(self, conn: Conn, approval_ids: list[int]
                           ) -> dict[int, list[Attachment]]:
        out: dict[int, list[Attachment]] = {}
        if approval_ids:
            for r in await self._all(conn, "attachment_list_many", {"approval_ids": approval_ids}):
                out.setdefault(r["approval_id"], []).append(rows.attachment_from_row(r))
        return out
