"""What a worker uses: claim, the outcomes of a claimed task, heartbeat, saved state, the gate.

The worker runtime (taskqueue/runtime/) and the workloads' handlers see the queue as this."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.batches import BatchesMixin
from taskqueue.store.gates import GatesMixin
from taskqueue.store.work import WorkMixin


class WorkerQueue(WorkMixin, BatchesMixin, GatesMixin, SharedQueue):
    """A worker's part of the queue: every update is fenced by the claim it holds."""
