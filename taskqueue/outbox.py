"""The Telegram outbox: which approval messages are owed, claimed, sent and closed (issue 4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskqueue.client_base import QueueBase

# A claim lasts this long (seconds): long enough for one send with its retries, short
# enough that a crashed sender's rows are owed again soon.
DEFAULT_OUTBOX_LEASE = 300.0


@dataclass(frozen=True)
class ApprovalMessage:
    """The Telegram message an approval owes or was sent as (one row of the outbox)."""

    approval_id: int
    token: str
    chat_id: int | None
    message_id: int | None
    sent_at: datetime | None
    claimed_by: str | None
    claim_until: datetime | None
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    closed_at: datetime | None
    old_chat_id: int | None
    old_message_id: int | None


def _message(row: Mapping[str, Any] | None) -> ApprovalMessage | None:
    return ApprovalMessage(**row) if row is not None else None


class OutboxMixin(QueueBase):
    """TaskQueue's outbox methods; each is one transaction, named like its query."""

    async def _outbox_all(self, name: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        async with self._tx() as conn:
            return await self._all(conn, name, params)

    async def _outbox_one(self, name: str, params: Mapping[str, Any]) -> ApprovalMessage | None:
        found = await self._outbox_all(name, params)
        return _message(found[0]) if found else None

    async def outbox_claim(self, sender: str, *, limit: int = 10,
                           lease: float = DEFAULT_OUTBOX_LEASE,
                           approval_id: int | None = None) -> list[ApprovalMessage]:
        """Claim unsent messages of open approvals for `sender`, oldest first."""
        found = await self._outbox_all("outbox_claim", {
            "sender": sender, "limit": limit, "lease": lease, "approval_id": approval_id})
        return [ApprovalMessage(**r) for r in sorted(found, key=lambda r: r["approval_id"])]

    async def outbox_claim_closing(self, sender: str, *, limit: int = 10,
                                   lease: float = DEFAULT_OUTBOX_LEASE,
                                   approval_id: int | None = None) -> list[ApprovalMessage]:
        """Claim sent messages whose approval is settled but which still show buttons."""
        found = await self._outbox_all("outbox_claim_closing", {
            "sender": sender, "limit": limit, "lease": lease, "approval_id": approval_id})
        return [ApprovalMessage(**r) for r in sorted(found, key=lambda r: r["approval_id"])]

    async def outbox_mark_sent(self, approval_id: int, sender: str, chat_id: int,
                               message_id: int) -> ApprovalMessage | None:
        """Record the sent message; None when `sender` no longer holds the claim."""
        return await self._outbox_one("outbox_mark_sent", {
            "approval_id": approval_id, "sender": sender, "chat_id": chat_id,
            "message_id": message_id})

    async def outbox_mark_closed(self, approval_id: int, sender: str) -> ApprovalMessage | None:
        """Record that the message now shows the outcome and has no buttons."""
        return await self._outbox_one("outbox_mark_closed",
                                      {"approval_id": approval_id, "sender": sender})

    async def outbox_release(self, approval_id: int, sender: str, error: str, delay: float,
                             *, attempted: bool = True) -> ApprovalMessage | None:
        """Give a claimed row back after a failure, to be tried again after `delay` s."""
        return await self._outbox_one("outbox_release", {
            "approval_id": approval_id, "sender": sender, "error": error,
            "delay": float(delay), "attempted": attempted})

    async def outbox_requeue(self, approval_id: int) -> ApprovalMessage | None:
        """Owe a sent, still open approval a fresh message (the /pending command)."""
        return await self._outbox_one("outbox_requeue", {"approval_id": approval_id})

    async def outbox_wake(self) -> None:
        """Make every owed send or edit due now, skipping what is left of its backoff."""
        await self._outbox_all("outbox_wake", {})

    async def approval_message_get(self, approval_id: int) -> ApprovalMessage | None:
        """The outbox row of one approval, or None."""
        return await self._outbox_one("approval_message_get", {"approval_id": approval_id})

    async def approval_message_find(self, chat_id: int,
                                    message_id: int) -> ApprovalMessage | None:
        """The approval message sent as this chat's message, or None."""
        return await self._outbox_one("approval_message_find",
                                      {"chat_id": chat_id, "message_id": message_id})

    async def alert_state_change(self, name: str, firing: bool) -> bool:
        """Set an alert's announced state; True only for the one caller that changed it."""
        async with self._tx() as conn:
            await self._all(conn, "alert_state_ensure", {"name": name})
            return await self._one(conn, "alert_state_change",
                                   {"name": name, "firing": firing}) is not None
