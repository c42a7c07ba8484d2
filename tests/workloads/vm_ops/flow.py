"""Driving vm_ops tasks through the real queue in tests: ticks, crashes, the invariant."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskqueue import Decision, Handler, Status, Task, TaskQueue, TickReport
from tests.workloads import crash_counting
from tests.workloads.crash_counting import Crasher

__all__ = ["Crasher", "answer", "approved_fingerprints", "assert_invariant", "enqueue",
           "run_to_the_end", "tick"]

CAP = "vm_ops"
Mutations = Callable[[], list[str]]


async def tick(queue: TaskQueue, handler: Handler, worker: str = "w1",
               lease: float = 30) -> TickReport:
    """One scheduler tick: claim one task, run one slice."""
    return await crash_counting.tick(queue, handler, CAP, worker, lease)


async def enqueue(queue: TaskQueue, vm: str, action: str, **args: Any) -> int:
    return (await queue.task_enqueue(CAP, {"vm": vm, "action": action, **args},
                                     max_attempts=20)).id


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
    for action in await queue.gated_action_list(task_id):  # every call the gate let through
        assert action.fingerprint in approved, f"task {task_id}: acted on an unapproved diff"
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
    async def check() -> None:
        await assert_invariant(queue, task_id, mutations, per_act)

    async def approve(task: Task) -> None:
        await answer(queue, task_id)

    return await crash_counting.run_to_the_end(
        queue, handler, CAP, task_id, crasher or Crasher([]), check=check, answer=approve,
        finished=(Status.SUCCEEDED, Status.FAILED))
