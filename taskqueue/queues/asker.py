"""What an asker uses: a program's own question to a person (a request parked at once, with
no handler), the wait for the answer, and the report of what it then did."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.requests import RequestsMixin


class AskerQueue(RequestsMixin, SharedQueue):
    """An asker's part of the queue: ask, request_park, request_wait, request_done."""
