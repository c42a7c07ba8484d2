"""What a channel uses: the notification outbox (register, claim, renew, mark delivered,
release, redeliver, send a message, list)."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.notifications import NotificationsMixin


class OutboxQueue(NotificationsMixin, SharedQueue):
    """A channel's part of the queue: what is owed to people, claimed as short leases."""
