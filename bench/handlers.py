"""The no-op handler `signoff worker` runs in the bench's worker-process drain."""

from __future__ import annotations

from taskqueue import Done, Task, TaskContext


async def noop(task: Task, ctx: TaskContext) -> Done:
    """Finish at once: what is measured is the runtime's own overhead."""
    return Done()
