"""What a people's channel uses: people's part and the outbox, in one type.

Not a facade of its own: the chat and web channels both decide and
read for people and deliver what the outbox owes them, often in one object (a channel's
sender reads the approval it delivers), so their queue is both parts."""

from __future__ import annotations

from taskqueue.queues.outbox import OutboxQueue
from taskqueue.queues.people import PeopleQueue


class ChannelQueue(PeopleQueue, OutboxQueue):
    """People's part and the outbox: what a delivery channel for people uses."""
