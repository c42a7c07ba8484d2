"""The base every facade shares: the pool, the limits and the few methods more than one role
calls (a task or an attachment by id, a task's event, the signals' figures, the ping).

A function any caller may pass its own part to (read_signals, a health check) takes this."""

from __future__ import annotations

from taskqueue.store.common import CommonMixin


class SharedQueue(CommonMixin):
    """What every part of the queue offers beside its own methods."""
