"""Heartbeat: beats about every third of the lease, and reports a lost lease once."""

from __future__ import annotations

import asyncio

from taskqueue import Heartbeat, LeaseLost, Reaper, Status, TaskQueue
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.worker_helpers import run_of, running_pool, wait_status


async def test_heartbeat_interval_is_a_third_of_the_lease(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1", lease=3)
    assert task is not None
    assert Heartbeat(queue, task, "w1", lease=3).interval == 1


async def test_heartbeat_keeps_a_long_slice_from_being_reaped(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {"sleep": 1.5})
    async with running_pool(queue, run_of(h.quick, lease=0.6)):
        await wait_status(queue, enq.id, "running")
        reaped = 0
        for _ in range(6):
            await asyncio.sleep(0.25)
            reaped += (await Reaper(queue).run_once()).requeued
        task = await wait_status(queue, enq.id, "succeeded")
    assert reaped == 0 and task.attempts == 0


async def test_heartbeat_extends_the_lease(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1", lease=0.3)
    assert task is not None and task.lease_expires_at is not None
    async with Heartbeat(queue, task, "w1", lease=0.3):
        await asyncio.sleep(0.5)
        after = await queue.task_get(task.id)
    assert after.status is Status.RUNNING
    assert after.lease_expires_at is not None and after.lease_expires_at > task.lease_expires_at


async def test_heartbeat_reports_a_lost_lease_once(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1", lease=0.3)
    assert task is not None
    lost: list[Exception] = []
    async with Heartbeat(queue, task, "w1", lease=0.3, on_lost=lost.append) as beat:
        await queue.task_cancel(task.id)
        await asyncio.sleep(0.5)
    assert len(lost) == 1 and isinstance(lost[0], LeaseLost)
    assert beat.lost is lost[0]
