"""What people use: decide, and the reads behind what they look at (a card, the inbox, a
task's page, the task list, the queue's summary), with their passkeys and signing links.

The chat and web channels see the queue as this and the outbox."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.decisions import DecisionsMixin
from taskqueue.store.passkeys import PasskeysMixin
from taskqueue.store.reads import ReadsMixin


class PeopleQueue(DecisionsMixin, PasskeysMixin, ReadsMixin, SharedQueue):
    """People's part of the queue: a decision is recorded once, by an approver."""
