"""The answer slot (issue 26, goal 6): a task a person answered runs at once, even while
every one of the worker's slots is busy with bulk work; the slot takes answered work only,
keeps the running cap, and two workers never both run one answer."""

from __future__ import annotations

import asyncio

import pytest

from taskqueue import Decision, Done, Outcome, Park, Status, Task, TaskContext, TaskQueue
from tests.taskqueue.worker_helpers import run_of, running_pool, wait_for, wait_status

# The bulk handlers wait on this until the test lets them finish.
RELEASE: asyncio.Event | None = None
# Long enough that only a NOTIFY can make a claim happen within a test's waits.
POLL = 30.0
# How long a task that must not start is watched (seconds, well above a claim's time).
QUIET = 2.0


async def bulk_or_ask(task: Task, ctx: TaskContext) -> Outcome:
    """`{"ask": true}` parks for a person, then finishes; anything else is bulk work that
    holds its slot until RELEASE is set."""
    if task.payload.get("ask"):
        return Done({"answered": True}) if task.decision is not None else Park("Go ahead?")
    assert RELEASE is not None
    await RELEASE.wait()
    return Done()


@pytest.fixture(autouse=True)
def release() -> asyncio.Event:
    global RELEASE
    RELEASE = asyncio.Event()
    return RELEASE


async def _parked(queue: TaskQueue, capability: str = "demo") -> tuple[int, int]:
    """An asking task, parked by a worker of its own; (task id, approval id)."""
    ask = await queue.task_enqueue(capability, {"ask": True})
    async with running_pool(queue, run_of(bulk_or_ask, capability), name="w-park"):
        await wait_status(queue, ask.id, Status.NEEDS_APPROVAL)
    approval = (await queue.task_detail(ask.id)).approvals[-1]
    return ask.id, approval.id


async def _count(queue: TaskQueue, status: Status, capability: str = "demo") -> int:
    return len(await queue.task_list(status=status, capability=capability))


async def _all_slots_busy(queue: TaskQueue, bulk: int, running: int) -> None:
    for i in range(bulk):
        await queue.task_enqueue("demo", {"i": i})
    await wait_for(lambda: _is(queue, Status.RUNNING, running))


async def _is(queue: TaskQueue, status: Status, n: int) -> bool:
    return await _count(queue, status) == n


async def test_an_answer_runs_while_every_slot_is_busy_and_the_slot_takes_no_bulk_work(
        queue: TaskQueue, release: asyncio.Event) -> None:
    ask, approval = await _parked(queue)
    async with running_pool(queue, run_of(bulk_or_ask), concurrency=2, poll_interval=POLL):
        await _all_slots_busy(queue, bulk=3, running=2)
        await queue.approval_decide(approval, Decision.APPROVED, "alice")
        done = await wait_status(queue, ask, Status.SUCCEEDED)
        assert done.result == {"answered": True}
        # The bulk work kept its two slots, and the third bulk task never took the answer's.
        await asyncio.sleep(QUIET)
        assert await _count(queue, Status.RUNNING) == 2
        assert await _count(queue, Status.PENDING) == 1
        release.set()
        await wait_for(lambda: _is(queue, Status.SUCCEEDED, 4))


async def test_without_an_answer_slot_the_answer_waits_for_a_free_slot(
        queue: TaskQueue, release: asyncio.Event) -> None:
    ask, approval = await _parked(queue)
    async with running_pool(queue, run_of(bulk_or_ask), concurrency=2, poll_interval=POLL,
                            answer_slots=0):
        await _all_slots_busy(queue, bulk=2, running=2)
        await queue.approval_decide(approval, Decision.APPROVED, "alice")
        await asyncio.sleep(QUIET)
        assert (await queue.task_get(ask)).status is Status.APPROVED
        release.set()
        await wait_status(queue, ask, Status.SUCCEEDED)


async def test_the_answer_slot_keeps_the_capabilitys_running_cap(
        queue: TaskQueue, release: asyncio.Event) -> None:
    ask, approval = await _parked(queue)
    await queue.capability_set("demo", max_running=2)
    async with running_pool(queue, run_of(bulk_or_ask), concurrency=2, poll_interval=POLL):
        await _all_slots_busy(queue, bulk=2, running=2)
        await queue.approval_decide(approval, Decision.APPROVED, "alice")
        await asyncio.sleep(QUIET)
        assert (await queue.task_get(ask)).status is Status.APPROVED  # the cap is full
        release.set()
        await wait_status(queue, ask, Status.SUCCEEDED)


async def test_two_busy_workers_run_one_answer_once(queue: TaskQueue,
                                                    release: asyncio.Event) -> None:
    ask, approval = await _parked(queue)
    async with running_pool(queue, run_of(bulk_or_ask), concurrency=1, poll_interval=POLL,
                            name="w-a"), \
            running_pool(queue, run_of(bulk_or_ask), concurrency=1, poll_interval=POLL,
                         name="w-b"):
        await _all_slots_busy(queue, bulk=2, running=2)
        await queue.approval_decide(approval, Decision.APPROVED, "alice")
        await wait_status(queue, ask, Status.SUCCEEDED)
        release.set()
        await wait_for(lambda: _is(queue, Status.SUCCEEDED, 3))
    claims = [e for e in (await queue.task_detail(ask)).events if e.kind == "claimed"]
    assert len(claims) == 2  # parked once, resumed once: by one of the two workers


async def test_an_answered_only_claim_takes_approved_work_and_nothing_else(
        queue: TaskQueue) -> None:
    ask, approval = await _parked(queue)
    await queue.task_enqueue("demo", {"i": 1}, priority=100)
    assert await queue.task_claim_many("demo", "w", 5, answered_only=True) == []
    await queue.approval_decide(approval, Decision.REVISED, "alice", note="shorter")
    claimed = await queue.task_claim_many("demo", "w", 5, answered_only=True)
    assert [t.id for t in claimed] == [ask]
    assert await queue.task_claim_many("demo", "w", 5, answered_only=True) == []
    assert [t.payload for t in await queue.task_claim_many("demo", "w", 5)] == [{"i": 1}]
