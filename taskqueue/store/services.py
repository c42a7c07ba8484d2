"""The background services' methods: the reaper's rescues and expiries, the pruner's
deletes and VACUUM, the reaper's run log, and the figures behind /metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from taskqueue.errors import one_line
from taskqueue.redact import redact
from taskqueue.store.base import APPROVALS_CHANNEL, TASKS_CHANNEL, QueueBase
from taskqueue.store.queries import query

# The tables a prune's deletes reach: `tasks` and `approval_attachments` (task_prune_many,
# attachment_prune_many), and through ON DELETE CASCADE `task_events`, `approvals`,
# `notifications` and `gated_actions` (from tasks), `approval_votes` (from approvals) and
# `notification_deliveries` (from notifications). The only names table_vacuum_pruned runs.
PRUNED_TABLES = ("tasks", "task_events", "approvals", "approval_attachments", "approval_votes",
                 "gated_actions", "notifications", "notification_deliveries")


class ServicesMixin(QueueBase):
    """Called by the maintenance services, not by workloads."""

    # -- background services ---------------------------------------------------------

    async def task_rescue_many(self, orphan_after: float) -> list[dict[str, Any]]:
        """Requeue (or fail) running tasks whose lease lapsed or stale ones with no lease."""
        async with self._tx() as conn:
            found = await self._all(conn, "task_rescue_many", {"orphan_after": orphan_after})
            for cap in sorted({r["capability"] for r in found if r["status"] == "pending"}):
                await self._notify(conn, TASKS_CHANNEL, cap)
        return found

    async def approval_expire_many(self) -> list[dict[str, Any]]:
        """Expire unanswered approvals past their expiry; their tasks end expired."""
        async with self._tx() as conn:
            found = await self._all(conn, "approval_expire_many", {"approval_id": None})
            for r in found:
                await self._notify(conn, APPROVALS_CHANNEL, str(r["approval_id"]))
        return found

    async def task_prune_many(self, params: dict[str, Any]) -> dict[str, Any]:
        """One batch of retention deletes (see the query); {"deleted", "last_id"}."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "task_prune_many", params)
        assert row is not None
        return row

    async def attachment_prune_many(self, params: dict[str, Any]) -> int:
        """One batch of attachment deletes of old finished tasks kept for the audit trail."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "attachment_prune_many", params)
        assert row is not None
        return int(row["deleted"])

    async def table_vacuum_pruned(self) -> dict[str, str | None]:
        """VACUUM (ANALYZE) each of PRUNED_TABLES, one statement a table; {table: None when
        vacuumed, else why not, one line with secrets masked}. Never raises for the
        database: an error is the table's reason, and so is a WARNING, which is how
        PostgreSQL skips a table the role does not own (the other tables still run).

        On a pooled connection: TaskQueue.connect's are in autocommit, which VACUUM needs
        (it cannot run in a transaction block), so it runs as it is and goes back as it
        was; a pool built otherwise gets its connection back with autocommit off again.
        The pool keeps connections beyond the workers' (the service: 4 more than two per
        slot; `signoff prune`: its only one), so holding one for the VACUUM's seconds takes
        none from the claims, and a connection of its own would have to rebuild the pool's
        (its DSN, its settings) for no gain."""
        try:
            async with self.pool.connection() as conn:
                return await _vacuum_all(conn)
        except psycopg.Error as exc:  # no connection: the pool's timeout, a lost server
            return dict.fromkeys(PRUNED_TABLES, _line(one_line(exc)))

    async def reaper_run_insert(self, **counts: int) -> dict[str, Any]:
        async with self._tx() as conn:
            row = await self._one(conn, "reaper_run_insert", counts)
        assert row is not None
        return row

    async def reaper_run_latest(self) -> dict[str, Any] | None:
        async with self.pool.connection() as conn:
            return await self._one(conn, "reaper_run_latest", {})

    async def metrics_read(self, decision_buckets: Sequence[float] = ()) -> dict[str, Any]:
        """The figures behind /metrics, read in one snapshot: tasks by capability and
        status, claimable ones, open approvals, decisions (with the time to decide
        counted into `decision_buckets`), expiries, and the reaper's totals."""
        buckets = {"buckets": [float(b) for b in decision_buckets]}
        async with self._snapshot() as conn:
            return {
                "decision_seconds": await self._all(conn, "metrics_decision_seconds", buckets),
                "expired": await self._all(conn, "metrics_approvals_expired", {}),
                "tasks": await self._all(conn, "metrics_tasks", {}),
                "claimable": await self._all(conn, "metrics_claimable", {}),
                "approvals": await self._one(conn, "metrics_approvals", {}),
                "decisions": await self._all(conn, "metrics_decisions", {}),
                "reaper": await self._one(conn, "metrics_reaper", {}),
            }

    # -- producer runs -------------------------------------------------------------------


async def _vacuum_all(conn: psycopg.AsyncConnection[Any]) -> dict[str, str | None]:
    if conn.autocommit:
        return {table: await _vacuum(conn, table) for table in PRUNED_TABLES}
    await conn.set_autocommit(True)
    try:
        return await _vacuum_all(conn)
    finally:
        await conn.set_autocommit(False)


async def _vacuum(conn: psycopg.AsyncConnection[Any], table: str) -> str | None:
    """VACUUM (ANALYZE) one table: None when done, else PostgreSQL's first WARNING or the
    error."""
    warned: list[str] = []

    def heard(diag: psycopg.errors.Diagnostic) -> None:
        if diag.severity_nonlocalized == "WARNING":
            warned.append(diag.message_primary or "a warning")

    conn.add_notice_handler(heard)
    try:
        await conn.execute(sql.SQL(query("table_vacuum")).format(table=sql.Identifier(table)))
    except psycopg.Error as exc:
        return _line(one_line(exc))
    finally:
        conn.remove_notice_handler(heard)
    return _line(warned[0]) if warned else None


def _line(text: str) -> str:
    """A reason for a log line: its first line, every registered secret masked."""
    return redact(text.strip().splitlines()[0] if text.strip() else text)
