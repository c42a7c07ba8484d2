"""Claim: one transaction that takes the next task in order, with a lease, for one worker."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import pytest

from taskqueue import BadInput, Decision, NewTask, Status, TaskQueue

from ..factories import CAP, backdate, claimed, enqueue, in_threads, parked, sync_rows, value


async def _drain(queue: TaskQueue, capability: str = CAP) -> list[int]:
    order = []
    while (task := await queue.task_claim(capability, "w")) is not None:
        order.append(task.id)
    return order


async def test_claim_on_an_empty_queue_returns_none(queue: TaskQueue) -> None:
    assert await queue.task_claim(CAP, "w1") is None


async def test_claim_takes_only_its_own_capability(queue: TaskQueue) -> None:
    await enqueue(queue, "other")
    assert await queue.task_claim(CAP, "w1") is None
    assert await queue.task_claim("other", "w1") is not None


async def test_claim_takes_higher_priority_first_then_the_oldest(queue: TaskQueue) -> None:
    out = await queue.task_enqueue_many(CAP, [NewTask({}, priority=p) for p in (0, 5, 0, 5, -1)])
    ids = [e.id for e in out]
    assert await _drain(queue) == [ids[1], ids[3], ids[0], ids[2], ids[4]]


async def test_claim_takes_approved_work_before_pending_work_of_any_priority(
        queue: TaskQueue) -> None:
    task, _ = await parked(queue)
    urgent = await enqueue(queue, priority=100)
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    assert await _drain(queue) == [task.id, urgent]


async def test_claim_skips_tasks_whose_run_after_is_in_the_future(queue: TaskQueue) -> None:
    later = await enqueue(queue, delay=60)
    now = await enqueue(queue)
    assert await _drain(queue) == [now]
    await backdate(queue, "tasks", "run_after", "1 s", "id = %s", later)
    assert await _drain(queue) == [later]


async def test_claim_sets_running_worker_token_and_lease(queue: TaskQueue) -> None:
    task_id = await enqueue(queue)
    task = await queue.task_claim(CAP, "w1")
    assert task is not None and task.id == task_id
    assert task.status is Status.RUNNING and task.worker == "w1"
    assert task.claim is not None and uuid.UUID(task.claim)
    assert task.lease_expires_at is not None and task.first_claimed_at is not None
    lease = (task.lease_expires_at - task.first_claimed_at).total_seconds()
    assert lease == pytest.approx(300, abs=1)
    stored = await queue.task_get(task_id)
    assert (stored.status, stored.worker, stored.claim) == (Status.RUNNING, "w1", task.claim)


async def test_claim_lease_comes_from_the_call_then_the_capability(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, lease_seconds=60)
    for lease, expected in [(None, 60), (900, 900)]:
        await enqueue(queue)
        task = await queue.task_claim(CAP, "w1", lease=lease)
        assert task is not None and task.lease_expires_at and task.first_claimed_at
        assert (task.lease_expires_at - task.first_claimed_at).total_seconds() == expected


async def test_claim_never_leaves_a_running_task_without_a_lease(queue: TaskQueue) -> None:
    for _ in range(5):
        await enqueue(queue)
    await _drain(queue)
    assert await value(queue, "SELECT count(*) FROM tasks WHERE status = 'running' "
                              "AND lease_expires_at IS NULL") == 0


async def test_claim_sets_first_claimed_at_on_the_first_claim_only(queue: TaskQueue) -> None:
    first = await claimed(queue)
    await queue.task_release(first.id, "w1", claim=first.claim)
    again = await queue.task_claim(CAP, "w2")
    assert again is not None and again.id == first.id
    assert again.first_claimed_at == first.first_claimed_at
    assert again.claim != first.claim


async def test_claim_writes_a_claimed_event_with_the_token(queue: TaskQueue) -> None:
    task = await claimed(queue)
    event = (await queue.task_detail(task.id)).events[-1]
    assert (event.kind, event.actor) == ("claimed", "w1")
    assert event.detail["from"] == "pending" and event.detail["to"] == "running"
    assert event.detail["claim"] == task.claim


async def test_claim_does_not_count_as_an_attempt(queue: TaskQueue) -> None:
    task = await claimed(queue)
    for _ in range(5):
        await queue.task_release(task.id, "w1", claim=task.claim)
        reclaimed = await queue.task_claim(CAP, "w1")
        assert reclaimed is not None
        task = reclaimed
    assert task.attempts == 0


def test_no_task_is_handed_to_two_workers_across_threads(dsn: str) -> None:
    sync_rows(dsn, "INSERT INTO tasks (capability) SELECT %s FROM generate_series(1, 200)", CAP)

    async def work(q: TaskQueue, i: int) -> list[int]:
        got = []
        while (task := await q.task_claim(CAP, f"w{i}")) is not None:
            got.append(task.id)
        return got

    per_thread = in_threads(16, dsn, work)
    claims = Counter(task_id for got in per_thread for task_id in got)
    assert len(claims) == 200 and set(claims.values()) == {1}
    assert sum(1 for got in per_thread if got) > 1, "the claimers did not overlap"
    [row] = sync_rows(dsn, "SELECT count(*) AS n, count(DISTINCT claim_token) AS tokens "
                           "FROM tasks WHERE status = 'running'")
    assert row == {"n": 200, "tokens": 200}
    events = sync_rows(dsn, "SELECT count(*) AS n FROM task_events WHERE kind = 'claimed'")
    assert events == [{"n": 200}]


async def test_no_task_is_handed_to_two_claimers_on_one_pool(queue: TaskQueue) -> None:
    await queue.task_enqueue_many(CAP, [NewTask({"n": n}) for n in range(100)])

    async def claimer(i: int) -> list[int]:
        got = []
        while (task := await queue.task_claim(CAP, f"w{i}")) is not None:
            got.append(task.id)
        return got

    per_claimer = await asyncio.gather(*(claimer(i) for i in range(16)))
    claims = Counter(task_id for got in per_claimer for task_id in got)
    assert len(claims) == 100 and set(claims.values()) == {1}


@pytest.mark.parametrize(("capability", "worker", "lease", "match"), [
    ("", "w1", None, "capability"),
    (CAP, "", None, "worker"),
    (CAP, "w1", 0, "lease"),
    (CAP, "w1", -5, "lease"),
])
async def test_claim_refuses_bad_input(offline: TaskQueue, capability: str, worker: str,
                                       lease: float | None, match: str) -> None:
    with pytest.raises(BadInput, match=match):
        await offline.task_claim(capability, worker, lease=lease)


async def test_a_claim_says_which_status_the_task_came_from(queue: TaskQueue) -> None:
    await queue.task_enqueue("from", {})
    task = await queue.task_claim("from", "w1")
    assert task is not None and task.claimed_from is Status.PENDING
    await queue.task_park(task.id, "w1", "Go?", claim=task.claim)
    await queue.approval_decide_for_task(task.id, "approved", "alice")
    again = await queue.task_claim("from", "w2")
    assert again is not None and again.claimed_from is Status.APPROVED
    assert (await queue.task_get(task.id)).claimed_from is None
