"""What maintenance owes the notification outbox and reads of it: reminders and
escalations of unanswered approvals, alert state changes, and the backlog per channel."""

from __future__ import annotations

from typing import Any

from taskqueue.store.base import QueueBase, jsonb
from taskqueue.store.models import JSON


class RemindersMixin(QueueBase):
    """Each method is one transaction, named like its query."""

    async def approval_remind_due(self) -> list[dict[str, Any]]:
        """Mark, record and owe the channels one reminder per open approval unanswered past
        its capability's remind_after_seconds; the approvals reminded now."""
        async with self._tx() as conn:
            return await self._all(conn, "approval_remind_due", {})

    async def approval_escalate_due(self) -> list[dict[str, Any]]:
        """As approval_remind_due, past escalate_after_seconds, naming escalate_to."""
        async with self._tx() as conn:
            return await self._all(conn, "approval_escalate_due", {})

    async def notification_backlog(self) -> list[dict[str, Any]]:
        """Per channel: undelivered rows and the oldest one's age in seconds."""
        async with self.pool.connection() as conn:
            return await self._all(conn, "notification_backlog", {})

    async def alert_state_change(self, name: str, firing: bool, body: JSON | None = None) -> bool:
        """Set an alert's state; True only for the one caller that changed it, whose
        transaction also owes every channel the alert (with `body`'s figures)."""
        async with self._tx() as conn:
            await self._all(conn, "alert_state_ensure", {"name": name})
            return await self._one(conn, "alert_state_change", {
                "name": name, "firing": firing, "body": jsonb(body or {}, "the alert")
            }) is not None
