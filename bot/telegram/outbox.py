"""The outbox sender: sends each approval's message once and closes it once it is settled.

Every approval owes one message (a row in `approval_messages`, written with the approval).
`run_once()` claims owed rows with SKIP LOCKED under a short claim lease, sends them, and
records the chat and message ids; it also edits sent messages whose approval was decided,
expired or cancelled, to show the outcome without buttons. Two bot processes never send
the same row: each records only what it claimed. The one window left is a crash after
Telegram accepted a message and before the ids were stored: the claim lapses and the
message is sent again, so a crash can duplicate a message but never lose one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import RetryAfter, TelegramError

from bot.telegram.callback import encode
from bot.telegram.courier import Courier, describe, seconds
from bot.telegram.render import closed_text, render_approval
from taskqueue import (
    APPROVALS_CHANNEL,
    Approval,
    ApprovalMessage,
    Listener,
    TaskQueue,
    default_worker_name,
)

log = logging.getLogger("signoff.telegram.outbox")

# Defaults: rows claimed per run; the claim lease, longer than one send can take with
# the courier's retries (4 waits of at most 30 s, 5 attempts of at most ~15 s each); the
# retry backoff after a failed send (doubling per attempt up to the cap, so an outage is
# retried at least once a minute); and the polling fallback when no NOTIFY arrives.
BATCH = 10
LEASE_SECONDS = 300.0
RETRY_BASE_SECONDS = 2.0
RETRY_MAX_SECONDS = 60.0
POLL_SECONDS = 30.0


@dataclass(frozen=True)
class OutboxReport:
    """What one run did."""

    sent: int = 0
    closed: int = 0
    failed: int = 0


def sender_name() -> str:
    """A name unique to this process, recorded as the claimer."""
    return f"telegram@{default_worker_name()}:{uuid.uuid4().hex[:6]}"


def buttons(approval_id: int, token: str) -> InlineKeyboardMarkup:
    """Approve / Revise / Skip, each carrying the approval id and the message's token."""
    return InlineKeyboardMarkup([[
        InlineKeyboardButton("✅ Approve", callback_data=encode(approval_id, "a", token)),
        InlineKeyboardButton("📝 Revise", callback_data=encode(approval_id, "r", token)),
        InlineKeyboardButton("⏭ Skip", callback_data=encode(approval_id, "s", token)),
    ]])


class OutboxSender:
    """Run `run_once()` directly in tests; `run()` loops on NOTIFY with polling as fallback."""

    def __init__(self, queue: TaskQueue, courier: Courier, chat_id: int, *,
                 name: str | None = None, batch: int = BATCH, lease: float = LEASE_SECONDS,
                 retry_base: float = RETRY_BASE_SECONDS, retry_max: float = RETRY_MAX_SECONDS,
                 poll: float = POLL_SECONDS) -> None:
        self.queue, self.courier, self.chat_id = queue, courier, chat_id
        self.name = name or sender_name()
        self.batch, self.lease, self.poll = batch, lease, poll
        self.retry_base, self.retry_max = retry_base, retry_max
        self._wake = asyncio.Event()
        self._failing = False

    async def run_once(self) -> OutboxReport:
        """Send owed messages and close settled ones until none is due."""
        sent = closed = failed = 0
        while True:
            # While Telegram fails, one row at a time probes it; the rest wait their turn.
            limit = 1 if self._failing else self.batch
            rows = await self.queue.outbox_claim(self.name, limit=limit, lease=self.lease)
            count = await self._send_batch(rows)
            sent += count
            failed += count < len(rows)
            done = await self._close_due() if not self._failing else 0
            closed += done
            if not (rows or done) or self._failing:
                break
        if sent or closed or failed:
            log.info("outbox ran sent=%d closed=%d failed=%d", sent, closed, failed)
        return OutboxReport(sent, closed, failed)

    async def close(self, approval_id: int) -> bool:
        """Edit one settled approval's message now (after a tap), unless another did."""
        rows = await self.queue.outbox_claim_closing(self.name, approval_id=approval_id,
                                                     lease=self.lease)
        return bool(rows) and await self._close(rows[0])

    def wake(self, channel: str = "", payload: str | None = None) -> None:
        """Ask the loop for a run (called on NOTIFY)."""
        self._wake.set()

    async def run(self) -> None:
        """Until cancelled: run on every NOTIFY on the approvals channel, or every `poll` s."""
        dsn = self.queue.pool.conninfo
        assert isinstance(dsn, str)
        listener = Listener(dsn, [APPROVALS_CHANNEL], self.wake)
        listening = asyncio.create_task(listener.run(), name="signoff-outbox-listener")
        try:
            while True:
                try:
                    await self.run_once()
                except Exception:
                    log.exception("outbox run failed; trying again in %.0fs", self.poll)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll)
                self._wake.clear()
        finally:
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)

    async def _send_batch(self, rows: list[ApprovalMessage]) -> int:
        """Send claimed rows in order; after a failure, give the untried ones back."""
        for done, row in enumerate(rows):
            if not await self._send(row):
                for rest in rows[done + 1:]:
                    await self.queue.outbox_release(rest.approval_id, self.name,
                                                    "not tried: Telegram is failing",
                                                    self.retry_base, attempted=False)
                return done
        return len(rows)

    async def _close_due(self) -> int:
        rows = await self.queue.outbox_claim_closing(self.name, limit=self.batch,
                                                     lease=self.lease)
        return sum([await self._close(row) for row in rows])

    async def _send(self, row: ApprovalMessage) -> bool:
        approval = await self.queue.approval_get(row.approval_id)
        task = await self.queue.task_get(approval.task_id)
        rendered = render_approval(approval, task.capability)
        try:
            message = await self.courier.text(self.chat_id, rendered.text,
                                              markup=buttons(approval.id, row.token))
        except TelegramError as exc:
            await self._failed(row, exc)
            return False
        saved = await self.queue.outbox_mark_sent(approval.id, self.name, self.chat_id,
                                                  message.message_id)
        if saved is None:
            log.warning("outbox claim lost after sending approval=%s task=%s message=%s",
                        approval.id, approval.task_id, message.message_id)
        log.info("approval sent task=%s approval=%s chat=%s message=%s", approval.task_id,
                 approval.id, self.chat_id, message.message_id)
        await self._recovered()
        await self._evidence(approval, rendered.document, message.message_id)
        if row.old_chat_id is not None and row.old_message_id is not None:
            await self._quietly(self.courier.edit(
                row.old_chat_id, row.old_message_id, "↪️ Re-sent below."))
        return True

    async def _evidence(self, approval: Approval, document: bytes | None, reply_to: int) -> None:
        """The attachments, as replies to the request; best effort, never re-sent."""
        if document is not None:
            await self._quietly(self.courier.document(
                self.chat_id, document, f"task-{approval.task_id}-request.txt",
                f"The full request of task {approval.task_id}", reply_to=reply_to))
        for meta in approval.attachments:
            item = await self.queue.attachment_get(meta.id)
            await self._quietly(self.courier.attachment(self.chat_id, item, reply_to=reply_to))

    async def _close(self, row: ApprovalMessage) -> bool:
        approval = await self.queue.approval_get(row.approval_id)
        task = await self.queue.task_get(approval.task_id)
        assert row.chat_id is not None and row.message_id is not None
        try:
            await self.courier.edit(row.chat_id, row.message_id,
                                    closed_text(approval, task.capability, task.status))
        except TelegramError as exc:
            await self._failed(row, exc)
            return False
        await self.queue.outbox_mark_closed(row.approval_id, self.name)
        log.info("approval message closed task=%s approval=%s decision=%s", approval.task_id,
                 approval.id, approval.decision or task.status)
        return True

    async def _failed(self, row: ApprovalMessage, exc: TelegramError) -> None:
        delay = min(self.retry_max, self.retry_base * 2 ** row.attempts)
        if isinstance(exc, RetryAfter):  # flood control asked for longer than we wait inline
            delay = max(delay, seconds(exc.retry_after))
        self._failing = True
        await self.queue.outbox_release(row.approval_id, self.name, describe(exc), delay)
        log.warning("telegram send failed approval=%s attempt=%d retry_in=%.0fs: %s",
                    row.approval_id, row.attempts + 1, delay, describe(exc))

    async def _recovered(self) -> None:
        if self._failing:
            self._failing = False
            await self.queue.outbox_wake()
            log.info("telegram reachable again; sending what was owed")

    async def _quietly(self, call: Awaitable[object]) -> None:
        try:
            await call
        except TelegramError as exc:
            log.warning("telegram evidence or cleanup failed: %s", describe(exc))
