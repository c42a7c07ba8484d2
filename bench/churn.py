"""The soak's work for one round: enqueue a batch, drain it with claimers, check it ran once.

A share of the tasks stop at a question that a person approves at once (approvals and their
notifications), and a share send a message about themselves (notifications with a task_id),
so every table the pruner empties grows with the work, as it does in production.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from bench.measure import execute, rate
from taskqueue import Completion, Decision, NewTask, Task, TaskQueue

CAPABILITY = "soak.work"
ENQUEUE_CALL = 1000  # tasks per task_enqueue_many call, as a producer would send them


@dataclass(frozen=True)
class Mix:
    """How the claimers work and what share of the tasks park or send a message."""

    claimers: int = 4
    claim_n: int = 50
    park_every: int = 200
    message_every: int = 20


@dataclass
class Drained:
    """What a round's claimers did: the ids they completed, and what did not go to plan."""

    ids: list[int] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    parked: int = 0
    messages: int = 0


def round_items(start: int, count: int, mix: Mix) -> list[NewTask]:
    """Tasks `start` … `start + count - 1` of the run, marked to park or send a message."""
    return [NewTask({"i": i, "park": i % mix.park_every == 0,
                     "message": i % mix.message_every == 0})
            for i in range(start, start + count)]


async def _detour(q: TaskQueue, task: Task, worker: str, done: Drained) -> bool:
    """Park and approve a task that asks (True: it is not finished yet); send its message."""
    if task.payload.get("park") and task.decision is None:
        await q.task_park(task.id, worker, "Go ahead?", claim=task.claim)
        await q.approval_decide_for_task(task.id, Decision.APPROVED, "soak-person")
        done.parked += 1
        return True
    if task.payload.get("message"):
        await q.notification_send("soak", f"task {task.id} is done", task_id=task.id)
        done.messages += 1
    return False


async def claimer_run(q: TaskQueue, worker: str, mix: Mix, done: Drained) -> None:
    """Claim `claim_n` at a time and complete them in one call, until nothing is left."""
    while tasks := await q.task_claim_many(CAPABILITY, worker, mix.claim_n):
        finishing = [t for t in tasks if not await _detour(q, t, worker, done)]
        settled = await q.task_complete_many(
            [Completion(t.id, worker, t.claim) for t in finishing])
        for task, result in zip(finishing, settled, strict=True):
            if isinstance(result, Task):
                done.ids.append(task.id)
            else:
                done.lost.append(f"task {task.id}: {result}")


# Every task of the round succeeded, with one completion each and one claim per visit
# (a parked task is claimed twice: before its question and after the approval).
_CHECK = """
SELECT (SELECT count(*) FROM tasks WHERE id = ANY(%(ids)s) AND status = 'succeeded')
           AS succeeded,
       count(*) FILTER (WHERE kind = 'completed') AS completed_events,
       count(*) FILTER (WHERE kind = 'claimed') AS claimed_events
FROM task_events WHERE task_id = ANY(%(ids)s)"""


async def drain_check(dsn: str, expected: list[int], done: Drained) -> dict[str, Any]:
    """Exactly once: the claimers completed the enqueued ids without repeats, and the
    database agrees."""
    counts = await execute(dsn, _CHECK, {"ids": expected})
    once = (len(done.ids) == len(set(done.ids)) and set(done.ids) == set(expected)
            and not done.lost and counts["succeeded"] == len(expected)
            and counts["completed_events"] == len(expected)
            and counts["claimed_events"] == len(expected) + done.parked)
    return {"exactly_once": once, "completed": len(done.ids), "db": counts,
            "lease_lost": done.lost}


async def churn(q: TaskQueue, dsn: str, start: int, count: int, mix: Mix) -> dict[str, Any]:
    """One round: enqueue `count` tasks, drain them, check them."""
    items = round_items(start, count, mix)
    expected = [e.id for i in range(0, count, ENQUEUE_CALL)
                for e in await q.task_enqueue_many(CAPABILITY, items[i:i + ENQUEUE_CALL])]
    done = Drained()
    started = time.perf_counter()
    await asyncio.gather(*(claimer_run(q, f"soak-w{i}", mix, done)
                           for i in range(mix.claimers)))
    seconds = time.perf_counter() - started
    return {"drain_tasks_per_s": rate(len(done.ids), seconds), "parked": done.parked,
            "messages": done.messages, **await drain_check(dsn, expected, done)}
