"""What a producer uses: enqueue, the dedupe keys a capability already holds, its runs.

Enqueue has a part of its own rather than a place in the worker's: what enqueues is a
producer (the scheduler's producer runs, a workload's producer, the CLI's `enqueue`, a
script), not the worker that claims; a worker's handler never enqueues. As River keeps
insert on the client a program uses, apart from the executor, a producer holds only this."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.producing import ProducingMixin


class ProducerQueue(ProducingMixin, SharedQueue):
    """A producer's part of the queue: new tasks and the runs that make them."""
