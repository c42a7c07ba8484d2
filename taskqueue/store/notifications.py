"""TaskQueue's notification outbox: what is owed to people, and the channels that deliver it.

Requests and closings of questions are written by the database itself (triggers) in the
transaction that parks, decides, expires or cancels; alerts with their state change;
free-form messages by `notification_send`. A channel registers once, then claims, delivers
and marks rows; a claim is a short lease its sender renews, so a sender that died leaves
its rows owed again within one lease.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from taskqueue.errors import BadInput
from taskqueue.redact import redact
from taskqueue.store.base import QueueBase, jsonb
from taskqueue.store.models import JSON
from taskqueue.store.work_models import Notification

NOTIFICATIONS_CHANNEL = "signoff_notifications"
# A claim lasts this long unless renewed (seconds): a dead sender's rows are owed again
# about this soon after it died.
DEFAULT_CLAIM_LEASE = 15.0
MAX_SUBJECT_CHARS = 200
MAX_MESSAGE_CHARS = 200_000
_CHANNEL = re.compile(r"^[a-z][a-z0-9_.-]{0,62}$")


def check_channel(channel: str) -> str:
    """A channel name: lowercase letters, digits, `_.-`, at most 63 characters."""
    if not isinstance(channel, str) or not _CHANNEL.match(channel):
        raise BadInput(f"a channel name is 1-63 lowercase letters, digits, _ . or -, "
                       f"starting with a letter, not {channel!r}")
    return channel


def _check_message(subject: str, text: str, html: str | None) -> None:
    if not subject.strip() or len(subject) > MAX_SUBJECT_CHARS:
        raise BadInput(f"a message needs a subject of 1-{MAX_SUBJECT_CHARS} characters")
    if not text.strip():
        raise BadInput("a message needs text")
    for name, value in (("text", text), ("html", html or "")):
        if len(value) > MAX_MESSAGE_CHARS:
            raise BadInput(f"a message's {name} is {len(value)} characters; "
                           f"at most {MAX_MESSAGE_CHARS}")


def _notification(row: Mapping[str, Any]) -> Notification:
    return Notification(
        id=row["id"], kind=row["kind"], channel=row["channel"], task_id=row["task_id"],
        approval_id=row["approval_id"], body=row["body"] or {}, created_at=row["created_at"],
        attempts=row["attempts"], last_error=row["last_error"], settled=bool(row["settled"]),
        redelivery=bool(row["redelivery"]))


class NotificationsMixin(QueueBase):
    """Each method is one transaction, named like its query."""

    async def notification_channel_register(self, channel: str) -> int:
        """Make `channel` owed every later notification; returns the open questions a
        channel new to this database is owed now (0 when it was registered before)."""
        params = {"channel": check_channel(channel)}
        async with self._tx() as conn:
            # Only a new channel fences: a service's every start re-registers its channel,
            # and the fence holds parks off for as long as it waits.
            if await self._one(conn, "notification_channel_known", params):
                return 0
            await self._send(conn, "notification_channel_fence", {})
            return len(await self._all(conn, "notification_channel_register", params))

    async def notification_send(self, subject: str, text: str, *, html: str | None = None,
                                task_id: int | None = None) -> int:
        """Owe every channel a free-form message: plain `text`, and optionally `html` for
        channels that show markup (they keep only the tags they allow). Returns its id."""
        _check_message(subject, text, html)
        body: JSON = {"subject": subject, "text": text}
        if html is not None:
            body["html"] = html
        async with self._tx() as conn:
            row = await self._one(conn, "notification_insert", {
                "kind": "message", "task_id": task_id, "body": jsonb(body, "the message")})
        assert row is not None
        return int(row["id"])

    async def notification_claim(self, channel: str, sender: str, *, limit: int = 10,
                                 lease: float = DEFAULT_CLAIM_LEASE,
                                 approval_id: int | None = None,
                                 take_lapsed: bool = True) -> list[Notification]:
        """Claim up to `limit` of the channel's undelivered notifications (or only those of
        one approval), oldest first. With `take_lapsed` False, rows whose claim by another
        sender lapsed are left to it: a sender just back from an outage gives the others
        time to record what they sent before it."""
        async with self._tx() as conn:
            found = await self._all(conn, "notification_claim", {
                "channel": check_channel(channel), "sender": sender, "limit": limit,
                "lease": lease, "approval_id": approval_id, "take_lapsed": take_lapsed})
        return [_notification(r) for r in found]

    async def notification_renew(self, channel: str, sender: str, *,
                                 lease: float = DEFAULT_CLAIM_LEASE) -> int:
        """Extend every claim `sender` holds; returns how many it holds."""
        async with self._tx() as conn:
            return len(await self._all(conn, "notification_renew",
                                       {"channel": channel, "sender": sender, "lease": lease}))

    async def notification_mark_delivered(self, notification_id: int, channel: str,
                                          sender: str, receipt: JSON | None = None) -> bool:
        """Record a delivery; False when `sender` no longer holds the claim."""
        async with self._tx() as conn:
            found = await self._all(conn, "notification_mark_delivered", {
                "id": notification_id, "channel": channel, "sender": sender,
                "receipt": jsonb(receipt, "the receipt")})
        return bool(found)

    async def notification_release(self, notification_id: int, channel: str, sender: str,
                                   error: str, delay: float, *,
                                   attempted: bool = True) -> bool:
        """Give a claimed row back after a failure, to be tried again after `delay` s."""
        async with self._tx() as conn:
            found = await self._all(conn, "notification_release", {
                "id": notification_id, "channel": channel, "sender": sender,
                "error": redact(error)[:2000], "delay": float(delay), "attempted": attempted})
        return bool(found)

    async def notification_redeliver(self, approval_id: int, channel: str) -> bool:
        """Owe `channel` the request of a still-open question again; False when it is
        settled or was never delivered (then it is still owed anyway)."""
        async with self._tx() as conn:
            return bool(await self._all(conn, "notification_redeliver",
                                        {"approval_id": approval_id, "channel": channel}))

    async def notification_next_due(self, channel: str) -> float | None:
        """Seconds until the channel's next undelivered row is due; None when none is owed."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "notification_next_due", {"channel": channel})
        return None if row is None or row["seconds"] is None else float(row["seconds"])

    async def notification_wake(self, channel: str) -> None:
        """Make every undelivered row of `channel` due now, skipping what is left of its
        backoff (the channel works again)."""
        async with self._tx() as conn:
            await self._all(conn, "notification_wake", {"channel": channel})

    async def notification_list(self, *, task_id: int | None = None,
                                kind: str | None = None) -> list[dict[str, Any]]:
        """Notifications with one row per channel's delivery (operators and tests)."""
        async with self.pool.connection() as conn:
            return await self._all(conn, "notification_list", {"task_id": task_id, "kind": kind})
