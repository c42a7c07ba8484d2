"""Handlers (and a producer) for the runtime's tests, importable as `module:function`.

Each writes what it did to the file named by the payload's "log" key (one line per event),
so a test can count how many times a handler body really finished.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

from taskqueue import Done, Park, Release, Task, TaskContext, TaskQueue
from taskqueue.runtime.handler import Outcome
from taskqueue.runtime.producer import ProducerContext

# In-process tests read what handlers saw here.
SEEN: list[tuple[str, int, Any]] = []


def _note(task: Task, line: str) -> None:
    if path := task.payload.get("log"):
        with Path(path).open("a") as f:
            f.write(f"{task.id} {line}\n")


async def quick(task: Task, ctx: TaskContext) -> Outcome:
    """Finishes at once (after an optional sleep)."""
    await asyncio.sleep(task.payload.get("sleep", 0))
    _note(task, "done")
    return Done({"n": task.payload.get("n")})


async def drafted_then_hang(task: Task, ctx: TaskContext) -> Outcome:
    """First slice: saves state, then hangs (to be killed). Later slices finish with it."""
    if ctx.state.get("step") == "drafted":
        _note(task, "done")
        return Done({"saw": ctx.state})
    await ctx.save_state({"step": "drafted"})
    _note(task, "drafted")
    await asyncio.sleep(120)
    return Done({"unreachable": True})


async def stubborn(task: Task, ctx: TaskContext) -> Outcome:
    """Swallows its cancellation and returns Done anyway: the runtime must discard it."""
    try:
        await asyncio.sleep(120)
    except asyncio.CancelledError:
        SEEN.append(("cancelled", task.id, ctx.cancelled.is_set()))
        return Done({"should": "be discarded"})
    return Done()


async def crash_after_save(task: Task, ctx: TaskContext) -> Outcome:
    """Saves state then raises; the next slice sees the saved state."""
    if ctx.state.get("step") == 1:
        SEEN.append(("resumed", task.id, dict(ctx.state)))
        return Done({"state": ctx.state})
    await ctx.save_state({"step": 1})
    raise RuntimeError("boom after save")


async def cooperative(task: Task, ctx: TaskContext) -> Outcome:
    """Waits for the cancellation signal, then releases with its progress."""
    await ctx.save_state({"progress": 1})
    await ctx.cancelled.wait()
    return Release({"progress": 2})


async def asks(task: Task, ctx: TaskContext) -> Outcome:
    """Parks once with a question; after a decision, finishes with it."""
    if task.decision is not None:
        SEEN.append(("decision", task.id, task.decision.value))
        return Done({"decision": task.decision.value, "note": task.approval.note
                     if task.approval else None})
    return Park("Send it?", request={"to": "acme"}, state={"draft": "v1"}, expires_in=3600)


async def not_an_outcome(task: Task, ctx: TaskContext) -> Any:
    return {"oops": True}


async def nightly(queue: TaskQueue, ctx: ProducerContext) -> None:
    """A producer: one task per period, plus one per item in its fixed list."""
    await ctx.enqueue({"period": ctx.period})
    for item in ("a", "b"):
        await ctx.enqueue({"item": item}, key=(item,))


async def broken_producer(queue: TaskQueue, ctx: ProducerContext) -> None:
    raise RuntimeError("producer broke")


NOT_CALLABLE = 42


async def reporting(queue: TaskQueue, ctx: ProducerContext) -> dict[str, object]:
    """A producer whose report counts reasons and lists where each item went."""
    return {"filtered_by_reason": {"too far": 1}, "postings": [
        {"key": "a", "company": "Acme\x1b[31m", "title": "Dev\nOps", "outcome": "filtered",
         "reasons": ["too far"], "score": None},
        {"key": "b", "company": "Beta", "title": "SRE", "outcome": "enqueued", "reasons": [],
         "score": 7, "task_id": 1}]}


async def frozen_objects(task: Task, ctx: TaskContext) -> Outcome:
    """Finishes with how many objects the process froze out of the collector's way."""
    return Done({"frozen": gc.get_freeze_count()})
