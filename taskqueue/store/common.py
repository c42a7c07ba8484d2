"""What every part of the queue may call: a task or an attachment by id, a task's event,
the signals' figures and the database's ping.

Each is called by more than one role (a worker records a stage and reads the files a
person approved; a channel records a refused tap and shows a card; a producer looks up a
task it enqueued; maintenance and people read the signals), so it sits on the base every
facade shares (taskqueue/queues/), not on one role's part.
"""

from __future__ import annotations

from typing import Any

import psycopg

from taskqueue.errors import NotFound, TaskNotFound
from taskqueue.store import rows
from taskqueue.store.base import QueueBase, jsonb
from taskqueue.store.checks import check_name
from taskqueue.store.models import JSON, Attachment, Event, Task


class CommonMixin(QueueBase):
    """The methods every facade offers beside its own; each is one transaction."""

    async def task_get(self, task_id: int) -> Task:
        """One task with its latest approval."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "task_get", {"id": task_id})
            if row is None:
                raise TaskNotFound(f"no such task: {task_id}")
            approvals = await self._latest_approvals(conn, [task_id])
        return rows.task_from_row(row, approvals.get(task_id))

    async def attachment_get(self, attachment_id: int) -> Attachment:
        """One attachment with its bytes."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "attachment_get", {"id": attachment_id})
        if row is None:
            raise NotFound(f"no such attachment: {attachment_id}")
        return rows.attachment_from_row(row)

    async def event_insert(self, task_id: int, kind: str, *, actor: str | None = None,
                           detail: JSON | None = None) -> Event:
        """Append an event that is not a transition (a refused tap, a sent message)."""
        check_name(kind, "the event kind", required=True)
        check_name(actor, "the actor")
        try:
            async with self._tx() as conn:
                row = await self._one(conn, "event_insert", {
                    "task_id": task_id, "kind": kind, "actor": actor,
                    "detail": jsonb(detail or {}, "the detail")})
        except psycopg.errors.ForeignKeyViolation:
            raise TaskNotFound(f"no such task: {task_id}") from None
        assert row is not None
        return rows.event_from_row(row)

    async def database_ping(self) -> bool:
        """True when the database answers a query (the health check)."""
        async with self.pool.connection() as conn:
            return await self._one(conn, "database_ping", {}) is not None

    async def signal_read(self, incident_age: float, nudge_age: float) -> dict[str, Any]:
        """The raw figures behind the signals, read in one snapshot."""
        async with self._snapshot() as conn:
            incident = await self._one(conn, "signal_incident", {"age_seconds": incident_age})
            nudge = await self._one(conn, "signal_nudge", {"age_seconds": nudge_age})
            counts = await self._one(conn, "signal_counts", {})
            reaper = await self._one(conn, "reaper_run_latest", {})
        return {"incident": incident, "nudge": nudge, "counts": counts, "reaper": reaper}
