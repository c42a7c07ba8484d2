"""Driving vm_ops tasks through the real queue in tests: ticks, crashes, the invariant."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from taskqueue import (
    CapabilityRun,
    Decision,
    Handler,
    Status,
    Task,
    TaskQueue,
    Tick,
    TickReport,
)
from tests.taskqueue.worker_helpers import lapse_and_reap

CAP = "vm_ops"
Mutations = Callable[[], list[str]]


async def tick(queue: TaskQueue, handler: Handler, worker: str = "w1",
               lease: float = 30) -> TickReport:
    """One scheduler tick: claim one task, run one slice."""
    return await Tick(queue, CapabilityRun(CAP, handler, lease=lease), worker).run_once()


async def enqueue(queue: TaskQueue, vm: str, action: str, **args: Any) -> int:
    return (await queue.task_enqueue(CAP, {"vm": vm, "action": action, **args},
                                     max_attempts=20)).id


async def backdate(queue: TaskQueue, sql: str, *params: object) -> None:
    async with queue.pool.connection() as conn:
        await conn.execute(sql, params)  # type: ignore[arg-type]


async def reap_dead_worker(queue: TaskQueue) -> None:
    """The dead worker's lease lapses; the reaper puts its task back to pending."""
    assert await lapse_and_reap(queue) == 1


class Crasher:
    """A checkpoint that, the first time each of `points` is reached, never returns."""

    def __init__(self, points: list[str]) -> None:
        self.pending, self.fired = list(points), list[str]()
        self.hit = asyncio.Event()

    async def __call__(self, name: str) -> None:
        if name in self.pending:
            self.pending.remove(name)
            self.fired.append(name)
            self.hit.set()
            await asyncio.Future()  # the worker is dead from here on


async def crashable_tick(queue: TaskQueue, handler: Handler, crasher: Crasher
                         ) -> TickReport | None:
    """One tick; None when the worker died in it (its task is then reaped)."""
    running = asyncio.create_task(tick(queue, handler))
    hit = asyncio.create_task(crasher.hit.wait())
    await asyncio.wait({running, hit}, return_when=asyncio.FIRST_COMPLETED)
    hit.cancel()
    if not crasher.hit.is_set():
        return running.result()
    crasher.hit.clear()
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await reap_dead_worker(queue)
    return None


async def approved_fingerprints(queue: TaskQueue, task_id: int) -> list[str]:
    """The fingerprints of the vm_change requests a person approved, oldest first."""
    detail = await queue.task_detail(task_id)
    return [a.request["fingerprint"] for a in detail.approvals
            if a.decision == Decision.APPROVED and (a.decided_by or "").strip()
            and a.request.get("kind") == "vm_change"]


async def assert_invariant(queue: TaskQueue, task_id: int, mutations: Mutations,
                           per_act: int = 1) -> int:
    """No mutating call without an approve by a person of the diff that was acted on, and
    no more acts than approves. Returns how many acts the hypervisor saw."""
    calls = mutations()
    acts, rest = divmod(len(calls), per_act)
    assert rest == 0, calls
    if not acts:
        return 0
    approved = await approved_fingerprints(queue, task_id)
    assert approved, f"task {task_id}: {calls} without any approve"
    task = await queue.task_get(task_id)
    acted = (task.state.get("acting") or task.result or {}).get("fingerprint")
    assert acted is None or acted in approved, f"task {task_id}: acted on an unapproved diff"
    assert acts <= len(approved), f"task {task_id}: {acts} acts for {len(approved)} approves"
    return acts


async def answer(queue: TaskQueue, task_id: int, decision: str = "approved",
                 note: str | None = None, by: str = "alice") -> Task:
    await queue.approval_decide_for_task(task_id, decision, by, note)
    return await queue.task_get(task_id)


async def run_to_the_end(queue: TaskQueue, handler: Handler, task_id: int,
                         mutations: Mutations, crasher: Crasher | None = None,
                         per_act: int = 1) -> Task:
    """Slices (crashing where `crasher` says) and approves of every park, checking the
    invariant after every slice; the finished task."""
    crasher = crasher or Crasher([])
    for _ in range(40):
        report = await crashable_tick(queue, handler, crasher)
        await assert_invariant(queue, task_id, mutations, per_act)
        if report is not None and report.task_id is None:
            task = await queue.task_get(task_id)
            if task.status in (Status.SUCCEEDED, Status.FAILED):
                return task
            assert task.status == Status.NEEDS_APPROVAL, task.status
            await answer(queue, task_id)
    raise AssertionError("the task did not finish")
