"""The handlers `signoff worker` runs in the bench: a no-op, and one that waits for approval."""

from __future__ import annotations

import time

from taskqueue import Done, Outcome, Park, Task, TaskContext


async def noop(task: Task, ctx: TaskContext) -> Done:
    """Finish at once: what is measured is the runtime's own overhead."""
    return Done()


async def approval_resume(task: Task, ctx: TaskContext) -> Outcome:
    """Park for a person the first time; once decided, finish with the wall-clock time
    (`time.time()`) the handler resumed, which bench.resume compares with its approve."""
    if task.decision is None:
        return Park("Resume?", request={"bench": "approve → resume"})
    return Done({"resumed_at": time.time(), "decision": task.decision.value})
