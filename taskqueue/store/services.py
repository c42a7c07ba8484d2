"""TaskQueue's methods for the background services: the reaper's rescues and expiries,
its run log, and the figures behind the signals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskqueue.store import rows
from taskqueue.store.base import APPROVALS_CHANNEL, TASKS_CHANNEL, QueueBase, jsonb
from taskqueue.store.models import JSON, ProducerRun


class ServicesMixin(QueueBase):
    """Called by the maintenance services and the producer runtime, not by workloads."""

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

    async def reaper_run_insert(self, **counts: int) -> dict[str, Any]:
        async with self._tx() as conn:
            row = await self._one(conn, "reaper_run_insert", counts)
        assert row is not None
        return row

    async def reaper_run_latest(self) -> dict[str, Any] | None:
        async with self.pool.connection() as conn:
            return await self._one(conn, "reaper_run_latest", {})

    async def database_ping(self) -> bool:
        """True when the database answers a query (the health check)."""
        async with self.pool.connection() as conn:
            return await self._one(conn, "database_ping", {}) is not None

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

    async def signal_read(self, incident_age: float, nudge_age: float) -> dict[str, Any]:
        """The raw figures behind the signals, read in one snapshot."""
        async with self._snapshot() as conn:
            incident = await self._one(conn, "signal_incident", {"age_seconds": incident_age})
            nudge = await self._one(conn, "signal_nudge", {"age_seconds": nudge_age})
            counts = await self._one(conn, "signal_counts", {})
            reaper = await self._one(conn, "reaper_run_latest", {})
        return {"incident": incident, "nudge": nudge, "counts": counts, "reaper": reaper}

    # -- producer runs -------------------------------------------------------------------

    async def producer_run_begin(self, capability: str, producer: str, period: str,
                                 runner: str, *, lease: float) -> ProducerRun | None:
        """Take the period for `runner`; None when it finished or a live runner holds it."""
        async with self._tx() as conn:
            row = await self._one(conn, "producer_run_begin", {
                "capability": capability, "producer": producer, "period": period,
                "runner": runner, "lease": lease})
        return rows.producer_run_from_row(row) if row else None

    async def producer_run_finish(self, run: ProducerRun, *, created: int, existing: int,
                                  report: JSON | None) -> ProducerRun | None:
        """Record the run's counts and report; None when another runner took it over."""
        async with self._tx() as conn:
            row = await self._one(conn, "producer_run_finish", {
                "id": run.id, "runner": run.runner, "created": created, "existing": existing,
                "report": jsonb(report, "the producer's report")})
        return rows.producer_run_from_row(row) if row else None

    async def producer_run_abandon(self, run: ProducerRun) -> None:
        """Give an unfinished period back at once (the producer raised)."""
        async with self._tx() as conn:
            await self._all(conn, "producer_run_abandon", {"id": run.id, "runner": run.runner})

    async def producer_run_get(self, capability: str, producer: str,
                               period: str) -> ProducerRun | None:
        async with self.pool.connection() as conn:
            row = await self._one(conn, "producer_run_get", {
                "capability": capability, "producer": producer, "period": period})
        return rows.producer_run_from_row(row) if row else None
