"""TaskQueue's methods for the background services: the reaper's rescues and expiries,
its run log, and the figures behind the signals."""

from __future__ import annotations

from typing import Any

from taskqueue.client_base import APPROVALS_CHANNEL, TASKS_CHANNEL, QueueBase


class ServicesMixin(QueueBase):
    """Called by taskqueue.reaper and taskqueue.signals, not by workloads."""

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

    async def reaper_run_insert(self, **counts: int) -> dict[str, Any]:
        async with self._tx() as conn:
            row = await self._one(conn, "reaper_run_insert", counts)
        assert row is not None
        return row

    async def reaper_run_latest(self) -> dict[str, Any] | None:
        async with self.pool.connection() as conn:
            return await self._one(conn, "reaper_run_latest", {})

    async def signal_read(self, incident_age: float, nudge_age: float) -> dict[str, Any]:
        """The raw figures behind the signals, read in one snapshot."""
        async with self._snapshot() as conn:
            incident = await self._one(conn, "signal_incident", {"age_seconds": incident_age})
            nudge = await self._one(conn, "signal_nudge", {"age_seconds": nudge_age})
            counts = await self._one(conn, "signal_counts", {})
            reaper = await self._one(conn, "reaper_run_latest", {})
        return {"incident": incident, "nudge": nudge, "counts": counts, "reaper": reaper}
