"""An operator's moves: a capability's settings, and a task's retry or cancel, each checked
against the states it may leave."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from taskqueue.errors import BadInput, Conflict, TaskNotFound
from taskqueue.store import rows
from taskqueue.store.base import TASKS_CHANNEL, QueueBase, jsonb
from taskqueue.store.checks import (
    MAX_NOTE_CHARS,
    check_capability,
    check_name,
    check_setting,
    check_text,
)
from taskqueue.store.groups import check_groups
from taskqueue.store.models import JSON, Capability, Task
from taskqueue.store.queries import query
from taskqueue.store.states import RETRYABLE, UNFINISHED, Status


class OperatorMixin(QueueBase):
    """Each method is one transaction, named like its query."""

    async def capability_set(self, capability: str, **changes: Any) -> Capability:
        """Change some settings of a capability; the others keep their values."""
        check_capability(capability)
        known = set(Capability.__dataclass_fields__) - {"capability"}
        if unknown := set(changes) - known:
            raise BadInput(f"unknown capability setting: {', '.join(sorted(unknown))}")
        for key, value in changes.items():
            check_setting(key, value)
        async with self._tx() as conn:
            if "day_timezone" in changes:
                ok = await self._one(conn, "timezone_exists", {"tz": changes["day_timezone"]})
                if not (ok and ok["ok"]):
                    raise BadInput(f"unknown time zone: {changes['day_timezone']}")
            await conn.execute(query("capability_lock"), {"capability": capability})
            row = await self._one(conn, "capability_get", {"capability": capability})
            current = rows.capability_from_row(row) if row else Capability(capability)
            merged = current.to_json() | changes
            groups = check_groups(merged["approval_groups"])
            merged["approval_groups"] = Jsonb([g.to_json() for g in groups]) if groups else None
            saved = await self._one(conn, "capability_put", merged)
        assert saved is not None
        return rows.capability_from_row(saved)

    async def task_retry(self, task_id: int, *, actor: str | None = None) -> Task:
        """Put a failed, expired or cancelled task back to pending with attempts reset."""
        check_name(actor, "the actor")
        return await self._operator_move(task_id, RETRYABLE, Status.PENDING, "retried", actor)

    async def task_cancel(self, task_id: int, *, actor: str | None = None,
                          reason: str | None = None) -> Task:
        """Cancel an unfinished task; a running one's worker then finds its lease lost."""
        check_name(actor, "the actor")
        check_text(reason, "the reason", MAX_NOTE_CHARS)
        return await self._operator_move(task_id, UNFINISHED, Status.CANCELLED, "cancelled",
                                         actor, {"reason": reason} if reason else {})

    async def _operator_move(self, task_id: int, sources: frozenset[Status], target: Status,
                             kind: str, actor: str | None,
                             detail: JSON | None = None) -> Task:
        try:
            async with self._tx() as conn:
                old = await self._one(conn, "task_lock", {"id": task_id})
                if old is None:
                    raise TaskNotFound(f"no such task: {task_id}")
                if old["status"] not in sources:
                    verb = {"retried": "retry", "cancelled": "cancel"}.get(kind, kind)
                    raise Conflict(f"task {task_id} is {old['status']}; cannot {verb} it")
                row = await self._one(conn, "task_set_status", {
                    "id": task_id, "status": target.value, "old_status": old["status"],
                    "reset_attempts": target is Status.PENDING, "kind": kind, "actor": actor,
                    "detail": jsonb(detail or {}, "the detail")})
                assert row is not None
                await self._notify(conn, TASKS_CHANNEL, row["capability"])
        except psycopg.errors.UniqueViolation:
            raise Conflict(f"task {task_id}: another task now holds its dedupe key") from None
        return rows.task_from_row(row)
