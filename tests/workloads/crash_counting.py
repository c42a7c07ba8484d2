"""Driving a workload's task through the real queue while its worker dies at named points,
and checking the far side's count of calls after every slice (the crash-injection tests of
every gated workload share this)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from taskqueue import CapabilityRun, Handler, Status, Task, TaskQueue, Tick, TickReport
from tests.taskqueue.worker_helpers import lapse_and_reap


class Crasher:
    """A checkpoint that, the first time each of `points` is reached, never returns."""

    def __init__(self, points: list[str]) -> None:
        self.pending = list(points)
        self.fired: list[str] = []
        self.hit = asyncio.Event()

    async def __call__(self, name: str) -> None:
        if name in self.pending:
            self.pending.remove(name)
            self.fired.append(name)
            self.hit.set()
            await asyncio.Future()  # the worker is dead from here on


async def backdate(queue: TaskQueue, sql: str, *params: object) -> None:
    """Move a time into the past (a lapsed lease, an expiry, a retry's backoff)."""
    async with queue.pool.connection() as conn:
        await conn.execute(sql, params)  # type: ignore[arg-type]


async def forced(queue: TaskQueue, sql: str, *params: object) -> None:
    """Write past the database's own rules (its triggers, e.g. "approved only with the
    required approves"): what a broken database would hold, which a handler still refuses."""
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute(sql, params)  # type: ignore[arg-type]


async def reap_dead_worker(queue: TaskQueue) -> None:
    """The dead worker's lease lapses; the reaper puts its task back to pending."""
    assert await lapse_and_reap(queue) == 1


async def tick(queue: TaskQueue, handler: Handler, capability: str, worker: str = "w1",
               lease: float = 60) -> TickReport:
    """One scheduler tick: claim one task, run one slice."""
    return await Tick(queue, CapabilityRun(capability, handler, lease=lease), worker).run_once()


async def crashable_tick(queue: TaskQueue, handler: Handler, capability: str,
                         crasher: Crasher) -> TickReport | None:
    """One tick; None when the worker died in it (then its task has been reaped)."""
    running = asyncio.create_task(tick(queue, handler, capability))
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


async def run_to_the_end(queue: TaskQueue, handler: Handler, capability: str, task_id: int,
                         crasher: Crasher, *, check: Callable[[], Awaitable[object]],
                         answer: Callable[[Task], Awaitable[None]], limit: int = 40,
                         finished: tuple[Status, ...] = (Status.SUCCEEDED,)) -> Task:
    """Slices (dying where `crasher` says) until the task finishes; `check` (the far side's
    count against the approvals) runs after every slice, crashed or not, and `answer`
    decides every park like a person would. The finished task."""
    for _ in range(limit):
        report = await crashable_tick(queue, handler, capability, crasher)
        await check()
        if report is not None and report.task_id is None:
            task = await queue.task_get(task_id)
            if task.status in finished:
                return task
            assert task.status == Status.NEEDS_APPROVAL, (task.status, task.last_error)
            await answer(task)
    raise AssertionError("the task did not finish")
