"""The web channel of the notification outbox: registered as `web`, it marks what the queue
owes people as shown, and tells every open page to refresh on every NOTIFY.

Every web process hears every NOTIFY through the process's shared ListenerHub, so pages
served by any process update live; the outbox rows are marked by whichever process claims
them first (SKIP LOCKED), as Telegram's senders share theirs.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from bot.web.live import Live
from taskqueue import NOTIFICATIONS_CHANNEL, ListenerHub, default_worker_name, wait_at_most
from taskqueue.queues.outbox import OutboxQueue

log = logging.getLogger("signoff.web.channel")

CHANNEL = "web"
BATCH = 50
# The polling fallback (seconds) when no NOTIFY arrives.
POLL_SECONDS = 30.0


class WebChannel:
    """`run()` until cancelled; `run_once()` marks the owed rows (tests call it directly)."""

    def __init__(self, queue: OutboxQueue, live: Live, *, poll: float = POLL_SECONDS) -> None:
        self.queue, self.live, self.poll = queue, live, poll
        self.name = f"web@{default_worker_name()}:{uuid.uuid4().hex[:6]}"
        self._wake = asyncio.Event()

    async def register(self) -> int:
        """Make this channel owed every later notification (and every open question)."""
        return await self.queue.notification_channel_register(CHANNEL)

    def heard(self, channel: str = "", payload: str | None = None) -> None:
        """A NOTIFY (or a reconnect, payload None): refresh the pages, mark the rows."""
        self.live.publish()
        self._wake.set()

    async def run_once(self) -> int:
        """Mark every owed row shown; how many were."""
        shown = 0
        while rows := await self.queue.notification_claim(CHANNEL, self.name, limit=BATCH):
            for row in rows:
                receipt = {"skipped": True} if row.settled else {"pages": self.live.count}
                shown += await self.queue.notification_mark_delivered(
                    row.id, CHANNEL, self.name, receipt)
        return shown

    async def run(self) -> None:
        await self.register()
        dsn = self.queue.pool.conninfo
        assert isinstance(dsn, str)
        hub = ListenerHub.shared(dsn)
        poll = hub.poll_for(self.poll)  # shorter when no NOTIFY can wake it
        listening = hub.subscribe([NOTIFICATIONS_CHANNEL], self.heard)
        try:
            # As the Telegram sender: the first pass once LISTEN holds, so nothing waits a poll.
            await wait_at_most(listening.connected, poll)
            while True:
                try:
                    await self.run_once()
                except Exception:
                    log.exception("web channel run failed; trying again in %.0fs", self.poll)
                await wait_at_most(self._wake, poll)
                self._wake.clear()
        finally:
            await listening.close()
