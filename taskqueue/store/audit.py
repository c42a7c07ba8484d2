"""TaskQueue's audit reads: the hash chain of who decided, the live rows it vouches for,
and the figures of `signoff audit` (taskqueue/maintenance/audit.py checks and sums them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from taskqueue.store.base import QueueBase

__all__ = ["AuditMixin"]

_PAGE = 5000
_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


class AuditMixin(QueueBase):
    """Read-only: the audit chain and the audit's figures."""

    async def audit_read(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The chain's records in order and every approval, approve and gated action as the
        chain describes them, in one snapshot (a decision committing meanwhile is in both
        or in neither)."""
        chain: list[dict[str, Any]] = []
        async with self._snapshot() as conn:
            while True:
                after = chain[-1]["seq"] if chain else 0
                page = await self._all(conn, "audit_chain_read", {"after": after, "n": _PAGE})
                chain += page
                if len(page) < _PAGE:
                    break
            live = await self._all(conn, "audit_live_read", {})
        return chain, live

    async def audit_figures_read(self, since: datetime | None = None) -> dict[str, Any]:
        """The audit's raw figures since `since` (None: all recorded history), one snapshot."""
        params = {"since": since or _EPOCH}
        async with self._snapshot() as conn:
            return {
                "tasks": await self._all(conn, "audit_tasks_by_capability", params),
                "reasons": await self._all(conn, "audit_producer_reasons", params),
                "gates_asked": (await self._one(conn, "audit_gates_asked", params) or {})["n"],
                "expired": (await self._one(conn, "audit_expired", params) or {})["n"],
                "actions": await self._all(conn, "audit_gated_actions", params),
            }
