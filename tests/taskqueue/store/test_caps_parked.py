"""max_parked is a true ceiling under real concurrency: claimers, parkers and deciders at once."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import psycopg

from taskqueue import Conflict, Decision, TaskQueue

from ..factories import CAP, in_threads, sync_rows

CEILING = 3
TASKS = 24

# Parked now, and held (claimed at least once, unfinished: every task that may park).
_SAMPLE = """
SELECT count(*) FILTER (WHERE status = 'needs_approval') AS parked,
       count(*) FILTER (WHERE first_claimed_at IS NOT NULL
                          AND status IN ('pending', 'running', 'needs_approval', 'approved'))
           AS held
FROM tasks WHERE capability = %s"""


def _sampler(dsn: str, done: threading.Event, samples: list[tuple[int, int]]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not done.is_set():
            for parked, held in conn.execute(_SAMPLE, (CAP,)):
                samples.append((parked, held))


async def _work(q: TaskQueue, i: int) -> int:
    """Worker i parks every new task and completes every approved one; decider i approves."""
    worker, parks = f"w{i}", 0
    for _ in range(4000):
        if i % 2:
            await _decide_one(q)
        task = await q.task_claim(CAP, worker)
        if task is None:
            if await _unfinished(q) == 0:
                return parks
            await asyncio.sleep(0.002)
            continue
        if task.approval is None:
            await asyncio.sleep(0.003)  # the slow part of a real task, before it parks
            await q.task_park(task.id, worker, "Go?", claim=task.claim)
            parks += 1
        else:
            await q.task_complete(task.id, worker, claim=task.claim)
    raise AssertionError("the queue never drained")


async def _decide_one(q: TaskQueue) -> None:
    open_ = await q.approval_list_open()
    if open_:
        # Another decider may win the race for the same approval.
        with contextlib.suppress(Conflict):
            await q.approval_decide(open_[0].id, Decision.APPROVED, "alice")


async def _unfinished(q: TaskQueue) -> int:
    async with q.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM tasks WHERE status NOT IN "
                                 "('succeeded', 'failed', 'skipped', 'expired', 'cancelled')")
        row = await cur.fetchone()
    assert row is not None
    return int(row["n"])


def test_parked_never_exceeds_max_parked_under_concurrent_claims_and_parks(dsn: str) -> None:
    sync_rows(dsn, "INSERT INTO capabilities (capability, max_parked) VALUES (%s, %s)",
              CAP, CEILING)
    sync_rows(dsn, "INSERT INTO tasks (capability) SELECT %s FROM generate_series(1, %s)",
              CAP, TASKS)
    done, samples = threading.Event(), []
    sampler = threading.Thread(target=_sampler, args=(dsn, done, samples))
    sampler.start()
    try:
        parks = in_threads(8, dsn, _work)
    finally:
        done.set()
        sampler.join()
    assert sum(parks) == TASKS, "every task parks exactly once"
    assert len(samples) > 20
    assert max(p for p, _ in samples) <= CEILING
    assert max(h for _, h in samples) <= CEILING
    assert max(p for p, _ in samples) >= 2, "the test never had tasks parked at once"
    assert sync_rows(dsn, "SELECT count(*) AS n FROM tasks WHERE status = 'succeeded'") == [
        {"n": TASKS}]


async def test_resumed_work_claims_while_the_ceiling_is_full(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_parked=1)
    first, second = [(await queue.task_enqueue(CAP)).id for _ in range(2)]
    task = await queue.task_claim(CAP, "w")
    assert task is not None and task.id == first
    assert await queue.task_claim(CAP, "w") is None, "a new task in flight fills the ceiling"
    await queue.task_park(first, "w", "Go?", claim=task.claim)
    await queue.approval_decide_for_task(first, Decision.APPROVED, "alice")
    resumed = await queue.task_claim(CAP, "w")
    assert resumed is not None and resumed.id == first and resumed.approval is not None
    await queue.task_complete(first, "w", claim=resumed.claim)
    fresh = await queue.task_claim(CAP, "w")
    assert fresh is not None and fresh.id == second


async def test_a_resumed_task_that_parks_again_stays_under_the_ceiling(
        queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_parked=1)
    first, _ = [(await queue.task_enqueue(CAP)).id for _ in range(2)]
    task = await queue.task_claim(CAP, "w")
    assert task is not None
    await queue.task_park(first, "w", "Go?", claim=task.claim)
    await queue.approval_decide_for_task(first, Decision.REVISED, "alice", note="shorter")
    # The revised task is held: while it waits to resume, no new task may start and park.
    assert [t.id for t in await queue.task_claim_many(CAP, "w", 5)] == [first]
