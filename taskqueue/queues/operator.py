"""What an operator uses: a capability's settings (caps, approvers, expiry), and a task's
retry or cancel."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.operator import OperatorMixin


class OperatorQueue(OperatorMixin, SharedQueue):
    """An operator's part of the queue: moves that the queue's transitions allow."""
