"""Heartbeat: beats about every third of the lease, and reports a lost lease once."""

from __future__ import annotations

import asyncio
import contextlib

from taskqueue import Heartbeat, LeaseLost, Reaper, Status, TaskQueue
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.worker_helpers import run_of, running_pool, wait_for, wait_status
from tests.timing import patience


async def test_heartbeat_interval_is_a_third_of_the_lease(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1", lease=3)
    assert task is not None
    assert Heartbeat(queue, task, "w1", lease=3).interval == 1


async def test_heartbeat_keeps_a_long_slice_from_being_reaped(queue: TaskQueue) -> None:
    # A slice of two and a half leases, a beat every second: only a loop stalled for two
    # seconds could miss it, whatever else the machine is doing.
    lease = patience(3)
    enq = await queue.task_enqueue("demo", {"sleep": 2.5 * lease})
    async with running_pool(queue, run_of(h.quick, lease=lease)):
        await wait_status(queue, enq.id, "running")
        reaped = 0
        while (task := await queue.task_get(enq.id)).status is Status.RUNNING:
            reaped += (await Reaper(queue).run_once()).requeued
            await asyncio.sleep(0.25)
        task = await wait_status(queue, enq.id, "succeeded")
    assert reaped == 0 and task.attempts == 0


async def test_heartbeat_extends_the_lease(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1", lease=3)
    assert task is not None and task.lease_expires_at is not None
    first = task.lease_expires_at

    async def extended() -> bool:
        after = await queue.task_get(task.id)
        return after.lease_expires_at is not None and after.lease_expires_at > first

    async with Heartbeat(queue, task, "w1", lease=3):
        await wait_for(extended)
    assert (await queue.task_get(task.id)).status is Status.RUNNING


async def test_heartbeat_reports_a_lost_lease_once(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1", lease=0.3)
    assert task is not None
    lost: list[Exception] = []
    async with Heartbeat(queue, task, "w1", lease=0.3, on_lost=lost.append) as beat:
        await queue.task_cancel(task.id)
        await wait_for(lambda: _async(bool(lost)))
        await asyncio.sleep(1)  # ten more beats' time: none reports it again
    assert len(lost) == 1 and isinstance(lost[0], LeaseLost)
    assert beat.lost is lost[0]


async def _async(value: bool) -> bool:
    return value


async def test_heartbeats_failing_together_retry_at_different_moments(
        queue: TaskQueue, dsn: str) -> None:
    tasks = []
    for _ in range(3):
        await queue.task_enqueue("demo", {})
        claimed = await queue.task_claim("demo", "w1", lease=0.6)
        assert claimed is not None
        tasks.append(claimed)
    async with TaskQueue.connect(dsn) as gone:
        pass  # its pool is closed: every beat on it fails at once, as in an outage
    beats = [Heartbeat(gone, t, "w1", lease=0.6) for t in tasks]
    async with contextlib.AsyncExitStack() as stack:
        for beat in beats:
            await stack.enter_async_context(beat)
        await wait_for(lambda: _async(all(b.retry is not None and b.retry.attempt >= 3
                                           for b in beats)))
    waits = [b.retry.last for b in beats if b.retry is not None]
    # Each drew its own wait from [0, the interval]; a fixed retry would be one beat.
    assert len(waits) == 3 and len(set(waits)) == 3, waits
    assert all(w is not None and 0 <= w <= beats[0].interval for w in waits), waits
    assert all(b.lost is None for b in beats)  # the database away is not a lost lease
