"""The handlers `signoff worker` runs in the bench: a no-op, one that waits for approval, and
bulk work beside it."""

from __future__ import annotations

import asyncio
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


async def bulk_or_resume(task: Task, ctx: TaskContext) -> Outcome:
    """Bulk work (`{"bulk_ms": N}`: sleep N ms, then finish) beside approval_resume's
    tasks, in one capability and one worker: bench.resume's load."""
    bulk_ms = task.payload.get("bulk_ms")
    if bulk_ms is not None:
        await asyncio.sleep(float(bulk_ms) / 1000)
        return Done()
    return await approval_resume(task, ctx)
