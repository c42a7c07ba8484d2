"""Helpers for driving build tasks through the queue in tests."""

from __future__ import annotations

from taskqueue import Decision, Handler, TaskQueue, TickReport
from tests.workloads import crash_counting
from tests.workloads.crash_counting import backdate, reap_dead_worker

__all__ = ["assert_published_only_approved", "backdate", "ready", "reap_dead_worker", "tick"]


async def tick(queue: TaskQueue, handler: Handler, capability: str = "roblox_build",
               worker: str = "w1", lease: float = 60) -> TickReport:
    """One scheduler tick: claim one task, run one slice."""
    return await crash_counting.tick(queue, handler, capability, worker, lease)


async def ready(queue: TaskQueue) -> None:
    """Released with a delay (a Retry-After): make it claimable now."""
    await backdate(queue, "UPDATE tasks SET run_after = now() WHERE status = 'pending'")


async def assert_published_only_approved(queue: TaskQueue, published: list[str],
                                         *task_ids: int) -> int:
    """Every published checksum is one a person approved (in one of these tasks); the
    number of publishes."""
    approved = set()
    for task_id in task_ids:
        detail = await queue.task_detail(task_id)
        approved |= {a.request.get("sha256") for a in detail.approvals
                     if a.decision == Decision.APPROVED and (a.decided_by or "").strip()
                     and a.request.get("kind") == "build_publish"}
    for sha256 in published:
        assert sha256 in approved, "published without an approve of that artifact"
    return len(published)
