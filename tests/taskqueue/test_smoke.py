"""A first end-to-end pass over the lifecycle: enqueue, claim, park, decide, resume, complete."""

from __future__ import annotations

from taskqueue import Decision, Status, TaskQueue


async def test_task_lifecycle_through_an_approval(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {"n": 1})
    task = await queue.task_claim("demo", "w1")
    assert task is not None and task.id == enq.id and task.status is Status.RUNNING
    await queue.task_park(task.id, "w1", "Go?", claim=task.claim)
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    resumed = await queue.task_claim("demo", "w2")
    assert resumed is not None and resumed.decision is Decision.APPROVED
    done = await queue.task_complete(resumed.id, "w2", claim=resumed.claim, result={"ok": True})
    assert done.status is Status.SUCCEEDED
