"""The Telegram channel of the notification outbox: delivers what the queue owes people.

`run_once()` claims the channel's owed notifications (SKIP LOCKED, a short claim lease a
background heartbeat renews while it works, so a sender killed with kill -9 leaves its
rows owed again within one lease) and delivers each by kind: a question as a message with
Approve / Revise / Skip buttons (its evidence as replies), a four-eyes approve short of the
count as an edit showing who approved so far (buttons kept), a closing as an edit showing the
outcome without buttons, an alert or a free-form message as text. A failed row backs off
on its own (doubling, capped) and the loop wakes when the earliest row is due again.

The one window left: Telegram accepted a request's message and the process died before
its ids were stored. That message is then sent again (never lost); once the ids are
stored, a crash before the delivery is marked no longer repeats it. A database that is away
at that moment (a restart, a failover) is waited for: what records a sent message is retried
while the process lives, and another sender, which saw the same outage, leaves claims that
lapsed meanwhile alone until it has been back for two leases, so it does not send that row
again before its sender records it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import RetryAfter, TelegramError

from bot.telegram.callback import encode
from bot.telegram.courier import Courier, describe, seconds
from bot.telegram.markup import sanitize
from bot.telegram.render import closed_text, escape, render_approval
from bot.telegram.store import CHANNEL, MessageStore
from bot.telegram.views import alert_text
from taskqueue import (
    NOTIFICATIONS_CHANNEL,
    TRANSIENT,
    Approval,
    Backoff,
    ListenerHub,
    Notification,
    default_worker_name,
    one_line,
    wait_at_most,
)
from taskqueue.queues.channel import ChannelQueue

log = logging.getLogger("signoff.telegram.delivery")

# Defaults: rows claimed per run; the claim lease (renewed every third of it while the
# sender works); the per-row backoff after a failed delivery (full jitter under a cap that
# doubles per attempt up to the max, so an outage is retried at least once a minute and the
# rows of one outage do not all come back at once); and the polling fallback when
# no NOTIFY arrives.
BATCH = 10
LEASE_SECONDS = 6.0
RETRY_BASE_SECONDS = 2.0
RETRY_MAX_SECONDS = 60.0
POLL_SECONDS = 30.0
SKIPPED: dict[str, Any] = {"skipped": True}
# Recording a message Telegram accepted is retried while the database is away, for up to
# RECORD_PATIENCE seconds: the ids must not be lost to a restart. The waits are full jitter
# under a cap that doubles from RECORD_RETRY to RECORD_RETRY_MAX (the core's Backoff), so
# the services of one restart do not all write at once; the cap is a third of the claim's
# default lease (how often the claim is renewed), so a record lands within one renewal of
# the database's return.
RECORD_RETRY = 0.2
RECORD_RETRY_MAX = 2.0
RECORD_PATIENCE = 120.0
# A sender back from an outage takes another sender's lapsed claim only after this many
# leases without a break: the other's record of a message sent before the outage lands
# within RECORD_RETRY_MAX of the database's return, well inside it.
TAKEOVER_LEASES = 2

T = TypeVar("T")


@dataclass(frozen=True)
class DeliveryReport:
    """What one run did."""

    sent: int = 0
    closed: int = 0
    failed: int = 0


def sender_name() -> str:
    """A name unique to this process, recorded as the claimer."""
    return f"telegram@{default_worker_name()}:{uuid.uuid4().hex[:6]}"


def message_text(body: dict[str, object]) -> str:
    """A free-form message: its HTML cut down to Telegram's tags, else its escaped text."""
    html = body.get("html")
    if isinstance(html, str) and html.strip():
        return sanitize(html)
    return f"<b>{escape(body.get('subject', ''))}</b>\n{escape(body.get('text', ''))}"


def buttons(approval_id: int, token: str) -> InlineKeyboardMarkup:
    """Approve / Revise / Skip, each carrying the approval id and the message's token."""
    return InlineKeyboardMarkup([[
        InlineKeyboardButton("✅ Approve", callback_data=encode(approval_id, "a", token)),
        InlineKeyboardButton("📝 Revise", callback_data=encode(approval_id, "r", token)),
        InlineKeyboardButton("⏭ Skip", callback_data=encode(approval_id, "s", token)),
    ]])


class TelegramChannel:
    """Run `run_once()` directly in tests; `run()` loops on NOTIFY, the next due row, or
    polling as the fallback."""

    def __init__(self, queue: ChannelQueue, courier: Courier, chat_id: int, *,
                 name: str | None = None, batch: int = BATCH, lease: float = LEASE_SECONDS,
                 retry_base: float = RETRY_BASE_SECONDS, retry_max: float = RETRY_MAX_SECONDS,
                 poll: float = POLL_SECONDS, people: Mapping[int, str] | None = None) -> None:
        self.queue, self.courier, self.chat_id = queue, courier, chat_id
        # [people.NAME] telegram_user_id → NAME: where an escalation's direct messages go.
        self.people = dict(people or {})
        self.store = MessageStore(queue)
        self.name = name or sender_name()
        self.batch, self.lease, self.poll = batch, lease, poll
        self.retry_base, self.retry_max = retry_base, retry_max
        self.record_backoff = Backoff(RECORD_RETRY, RECORD_RETRY_MAX)
        self._wake = asyncio.Event()
        self._failing = False
        self._lock = asyncio.Lock()
        # Since when the database has answered without a break (monotonic; -inf: no break
        # seen; None: away now). Another sender's lapsed claim is taken only after
        # TAKEOVER_LEASES leases of that, so a sender that sent a row before an outage
        # records it first, not this one again (a restart, a failover: claims lapse alike).
        self._steady_since: float | None = float("-inf")
        self.takeover_after = TAKEOVER_LEASES * lease

    async def register(self) -> int:
        """Make this channel owed every later notification (and every open question)."""
        return await self.queue.notification_channel_register(CHANNEL)

    async def run_once(self, approval_id: int | None = None) -> DeliveryReport:
        """Deliver owed notifications (or only those of one approval) until none is due."""
        sent = closed = failed = 0
        async with self._lock, self._renewing():
            while True:
                # While Telegram fails, one row at a time probes it; the rest wait their turn.
                limit = 1 if self._failing else self.batch
                rows = await self.queue.notification_claim(
                    CHANNEL, self.name, limit=limit, lease=self.lease, approval_id=approval_id,
                    take_lapsed=self._steady_for(self.takeover_after))
                done = await self._deliver_batch(rows)
                sent += sum(1 for r in rows[:done] if r.kind != "approval_closed")
                closed += sum(1 for r in rows[:done] if r.kind == "approval_closed")
                failed += done < len(rows)
                if not rows or self._failing:
                    break
        if sent or closed or failed:
            log.info("delivery ran sent=%d closed=%d failed=%d", sent, closed, failed)
        return DeliveryReport(sent, closed, failed)

    def _steady_for(self, seconds: float) -> bool:
        since = self._steady_since
        return since is not None and time.monotonic() - since >= seconds

    def _database(self, answered: bool) -> None:
        """Note whether the database answered; a break starts the steady time again."""
        if not answered:
            self._steady_since = None
        elif self._steady_since is None:
            self._steady_since = time.monotonic()

    async def _watch_database(self) -> None:
        """Ping every third of a lease, so an outage is seen even while nothing is owed."""
        while True:
            try:
                async with asyncio.timeout(self.lease / 3):
                    answered = await self.queue.database_ping()
            except (TimeoutError, *TRANSIENT):
                answered = False
            self._database(answered)
            await asyncio.sleep(self.lease / 3)

    async def close(self, approval_id: int) -> bool:
        """Show one settled approval's outcome now (after a tap), unless another did."""
        return (await self.run_once(approval_id)).closed > 0

    async def progress(self, approval_id: int) -> dict[str, Any]:
        """Four-eyes: show who approved so far on the open request's message, buttons kept
        (after a tap at once; an approve from the web or the CLI arrives as an
        `approval_progress` row). A message not sent yet, or closed, is left alone."""
        shown = await self.store.message_get(approval_id)
        if shown is None or shown.closed_at is not None:
            return SKIPPED
        approval = await self.queue.approval_get(approval_id)
        if not approval.is_open:
            return SKIPPED  # its closing row follows and shows the outcome
        task = await self.queue.task_get(approval.task_id)
        await self.courier.edit(shown.chat_id, shown.message_id,
                                render_approval(approval, task.capability).text,
                                markup=buttons(approval.id, shown.token))
        return {"chat_id": shown.chat_id, "message_id": shown.message_id}

    async def _progressed(self, row: Notification) -> dict[str, Any]:
        assert row.approval_id is not None
        receipt = await self.progress(row.approval_id)
        if receipt is not SKIPPED:
            log.info("approval progress shown task=%s approval=%s approved=%s of %s",
                     row.task_id, row.approval_id, row.body.get("approved"),
                     row.body.get("required"))
        return receipt

    def wake(self, channel: str = "", payload: str | None = None) -> None:
        """Ask the loop for a run (called on NOTIFY)."""
        self._wake.set()

    async def run(self) -> None:
        """Until cancelled: deliver on every NOTIFY, when the next row is due, or every
        `poll` seconds."""
        await self.register()
        dsn = self.queue.pool.conninfo
        assert isinstance(dsn, str)
        # The process's shared LISTEN connection (the service's worker pools use it too).
        hub = ListenerHub.shared(dsn)
        poll = hub.poll_for(self.poll)  # shorter when no NOTIFY can wake it
        listening = hub.subscribe([NOTIFICATIONS_CHANNEL], self.wake)
        watching = asyncio.create_task(self._watch_database(), name="signoff-telegram-watch")
        try:
            # The first pass reads the outbox once LISTEN holds (or a poll later, when the
            # database is away): a row added before that would otherwise wait a whole poll.
            await wait_at_most(listening.connected, poll)
            while True:
                wait = poll
                try:
                    await self.run_once()
                    due = await self.queue.notification_next_due(CHANNEL)
                    wait = poll if due is None else min(poll, max(0.05, due))
                except Exception as exc:
                    if isinstance(exc, TRANSIENT):
                        self._database(False)
                    log.exception("delivery run failed; trying again in %.0fs", self.poll)
                await wait_at_most(self._wake, wait)
                self._wake.clear()
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            await listening.close()

    @contextlib.asynccontextmanager
    async def _renewing(self) -> AsyncIterator[None]:
        """Renew this sender's claims every third of a lease while it works."""
        async def beat() -> None:
            while True:
                await asyncio.sleep(self.lease / 3)
                with contextlib.suppress(Exception):
                    await self.queue.notification_renew(CHANNEL, self.name, lease=self.lease)

        task = asyncio.create_task(beat(), name="signoff-telegram-renew")
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _deliver_batch(self, rows: list[Notification]) -> int:
        """Deliver claimed rows in order; after a failure, give the untried ones back."""
        for done, row in enumerate(rows):
            try:
                receipt = await self._deliver(row)
            except TelegramError as exc:
                await self._failed(row, exc)
                for rest in rows[done + 1:]:
                    await self.queue.notification_release(
                        rest.id, CHANNEL, self.name, "not tried: Telegram is failing",
                        self.retry_base, attempted=False)
                return done
            if not await self._durably(functools.partial(
                    self.queue.notification_mark_delivered, row.id, CHANNEL, self.name,
                    receipt)):
                log.warning("delivery claim lost notification=%s task=%s", row.id, row.task_id)
            await self._recovered()
        return len(rows)

    async def _deliver(self, row: Notification) -> dict[str, Any]:
        if row.kind == "approval_request":
            return await self._request(row)
        if row.kind == "approval_closed":
            return await self._closing(row)
        if row.kind == "approval_progress":
            return await self._progressed(row)
        text = alert_text(row.body) if row.kind == "alert" else message_text(row.body)
        message = await self.courier.text(self.chat_id, text)
        await self._escalate(row, text)
        log.info("notification sent kind=%s notification=%s task=%s message=%s", row.kind,
                 row.id, row.task_id, message.message_id)
        return {"chat_id": self.chat_id, "message_id": message.message_id}

    async def _request(self, row: Notification) -> dict[str, Any]:
        assert row.approval_id is not None
        shown = await self.store.message_get(row.approval_id)
        if row.settled or (shown is not None and not row.redelivery):
            # Settled before it went out (its closing follows), or sent and stored just
            # before a crash: either way there is nothing to send.
            return SKIPPED
        approval = await self.queue.approval_get(row.approval_id)
        task = await self.queue.task_get(approval.task_id)
        rendered = render_approval(approval, task.capability)
        token = secrets.token_hex(5)
        message = await self.courier.text(self.chat_id, rendered.text,
                                          markup=buttons(approval.id, token))
        old = await self._durably(lambda: self.store.message_save(
            approval.id, token, self.chat_id, message.message_id))
        log.info("approval sent task=%s approval=%s chat=%s message=%s", approval.task_id,
                 approval.id, self.chat_id, message.message_id)
        await self._evidence(approval, rendered.document, message.message_id)
        if old is not None:
            await self._quietly(self.courier.edit(old.chat_id, old.message_id,
                                                  "↪️ Re-sent below."))
        return {"chat_id": self.chat_id, "message_id": message.message_id}

    async def _escalate(self, row: Notification, text: str) -> None:
        """An escalation also goes to each `escalate_to` person whose Telegram id is known,
        as a direct message (best effort: the chat has it in any case)."""
        names = row.body.get("escalate_to") if row.kind == "message" else None
        if not isinstance(names, list):
            return
        wanted = {n.strip().casefold() for n in names if isinstance(n, str)}
        for user_id, name in sorted(self.people.items()):
            if name.strip().casefold() in wanted:
                await self._quietly(self.courier.text(user_id, text))
                log.info("escalation sent to person=%s task=%s", name, row.task_id)

    async def _evidence(self, approval: Approval, document: bytes | None, reply_to: int) -> None:
        """The attachments, as replies to the request; best effort, never re-sent."""
        if document is not None:
            await self._quietly(self.courier.document(
                self.chat_id, document, f"task-{approval.task_id}-request.txt",
                f"The full request of task {approval.task_id}", reply_to=reply_to))
        for meta in approval.attachments:
            item = await self.queue.attachment_get(meta.id)
            await self._quietly(self.courier.attachment(self.chat_id, item, reply_to=reply_to))

    async def _closing(self, row: Notification) -> dict[str, Any]:
        assert row.approval_id is not None
        shown = await self.store.message_get(row.approval_id)
        if shown is None or shown.closed_at is not None:
            return SKIPPED
        approval = await self.queue.approval_get(row.approval_id)
        task = await self.queue.task_get(approval.task_id)
        await self.courier.edit(shown.chat_id, shown.message_id,
                                closed_text(approval, task.capability, task.status,
                                            row.body.get("outcome")))
        await self._durably(lambda: self.store.message_close(shown.approval_id))
        log.info("approval message closed task=%s approval=%s outcome=%s", approval.task_id,
                 approval.id, row.body.get("outcome"))
        return {"chat_id": shown.chat_id, "message_id": shown.message_id}

    async def _durably(self, write: Callable[[], Awaitable[T]]) -> T:
        """`write()` (a record of what Telegram accepted), retried while the database is
        away (with `record_backoff`), for up to RECORD_PATIENCE seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RECORD_PATIENCE
        while True:
            try:
                done = await write()
            except TRANSIENT as exc:
                if loop.time() > deadline:
                    self.record_backoff.reset()
                    raise
                delay = self.record_backoff.next()
                log.warning("delivery: the database is away; recording a sent message again "
                            "in %.1fs: %s", delay, one_line(exc))
                await asyncio.sleep(delay)
            else:
                self.record_backoff.reset()
                return done

    async def _failed(self, row: Notification, exc: TelegramError) -> None:
        delay = Backoff(self.retry_base, self.retry_max).delay(row.attempts + 1)
        if isinstance(exc, RetryAfter):  # flood control asked for longer than we wait inline
            delay = max(delay, seconds(exc.retry_after))
        self._failing = True
        await self.queue.notification_release(row.id, CHANNEL, self.name, describe(exc), delay)
        log.warning("telegram delivery failed notification=%s kind=%s attempt=%d "
                    "retry_in=%.0fs: %s", row.id, row.kind, row.attempts + 1, delay,
                    describe(exc))

    async def _recovered(self) -> None:
        if self._failing:
            self._failing = False
            await self.queue.notification_wake(CHANNEL)
            log.info("telegram reachable again; delivering what was owed")

    async def _quietly(self, call: Awaitable[object]) -> None:
        try:
            await call
        except TelegramError as exc:
            log.warning("telegram evidence or cleanup failed: %s", describe(exc))
