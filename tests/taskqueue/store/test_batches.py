"""Batched claims and outcomes: task_claim_many, task_*_many and the runtime's OutcomeBuffer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from taskqueue import (
    BadInput,
    Completion,
    Done,
    Failure,
    LeaseLost,
    Releasing,
    Status,
    Task,
    TaskContext,
    TaskNotFound,
    TaskQueue,
)
from taskqueue.runtime.outcomes import OutcomeBuffer

from ..factories import CAP, enqueue, sync_rows, value
from ..worker_helpers import events, run_of, running_pool, wait_for


async def _claim(queue: TaskQueue, n: int, worker: str = "w") -> list[Task]:
    return await queue.task_claim_many(CAP, worker, n)


async def test_claim_many_takes_up_to_n_in_claim_order(queue: TaskQueue) -> None:
    low = await enqueue(queue)
    high = await enqueue(queue, priority=5)
    rest = [await enqueue(queue) for _ in range(3)]
    got = await _claim(queue, 3)
    assert [t.id for t in got] == [high, low, rest[0]]
    assert all(t.status is Status.RUNNING and t.claim for t in got)
    assert len({t.claim for t in got}) == 3
    assert [t.id for t in await _claim(queue, 10)] == rest[1:]
    assert await _claim(queue, 10) == []


async def test_claim_many_keeps_max_running_exact(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_running=3)
    for _ in range(6):
        await enqueue(queue)
    assert len(await _claim(queue, 10)) == 3
    assert await _claim(queue, 10) == []


async def test_claim_many_keeps_daily_new_exact_but_resumes_released_work(
        queue: TaskQueue) -> None:
    await queue.capability_set(CAP, daily_new=2)
    for _ in range(5):
        await enqueue(queue)
    first, _ = await _claim(queue, 5)
    await queue.task_release(first.id, "w", claim=first.claim)
    assert [t.id for t in await _claim(queue, 5)] == [first.id]


async def test_complete_many_fences_each_task_on_its_own_claim(queue: TaskQueue) -> None:
    for _ in range(3):
        await enqueue(queue)
    a, b, c = await _claim(queue, 3)
    settled = await queue.task_complete_many([
        Completion(a.id, "w", a.claim, {"n": 1}),
        Completion(b.id, "w", "00000000-0000-0000-0000-000000000000", {"n": 2}),
        Completion(c.id, "w", c.claim, {"n": 3}),
        Completion(999999, "w", None)])
    assert isinstance(settled[0], Task) and settled[0].result == {"n": 1}
    assert isinstance(settled[1], LeaseLost) and "running" in str(settled[1])
    assert isinstance(settled[2], Task) and settled[2].status is Status.SUCCEEDED
    assert isinstance(settled[3], TaskNotFound)
    assert (await queue.task_get(b.id)).status is Status.RUNNING
    assert [e.actor for e in await events(queue, a.id, "completed")] == ["w"]
    assert await events(queue, b.id, "completed") == []


async def test_release_and_fail_many_write_their_rows_and_events(queue: TaskQueue) -> None:
    for _ in range(3):
        await enqueue(queue)
    a, b, c = await _claim(queue, 3)
    released = await queue.task_release_many([
        Releasing(a.id, "w", a.claim, {"step": 2}, 60, "busy")])
    failed = await queue.task_fail_many([
        Failure(b.id, "w", b.claim, "boom"), Failure(c.id, "w", c.claim, "bad", retry=False)])
    assert isinstance(released[0], Task) and released[0].state == {"step": 2}
    assert released[0].status is Status.PENDING
    assert [getattr(t, "status", None) for t in failed] == [Status.PENDING, Status.FAILED]
    [ev] = await events(queue, a.id, "released")
    assert ev.detail["reason"] == "busy" and ev.detail["delay_seconds"] == 60
    [ev] = await events(queue, c.id, "failed")
    assert ev.detail["to"] == "failed" and ev.detail["error"] == "bad"


async def test_settle_many_writes_what_the_full_calls_write_and_answers_statuses(
        queue: TaskQueue, dsn: str) -> None:
    for _ in range(6):
        await enqueue(queue)
    a, b, c, d, e, f = await _claim(queue, 6)
    # The same outcomes through the full calls (a, c, e) and the status-only one (b, d, f).
    full = [await queue.task_complete_many([Completion(a.id, "w", a.claim, {"n": 1})]),
            await queue.task_release_many([Releasing(c.id, "w", c.claim, {"s": 1}, 0, "x")]),
            await queue.task_fail_many([Failure(e.id, "w", e.claim, "bad", retry=False)])]
    lean = [await queue.task_settle_many([Completion(b.id, "w", b.claim, {"n": 1}),
                                          Completion(999999, "w", None)]),
            await queue.task_settle_many([Releasing(d.id, "w", d.claim, {"s": 1}, 0, "x"),
                                          Releasing(a.id, "w", a.claim)]),
            await queue.task_settle_many([Failure(f.id, "w", f.claim, "bad", retry=False)])]
    assert [r[0].status for r in full] == [Status.SUCCEEDED, Status.PENDING, Status.FAILED]
    assert [r[0] for r in lean] == [Status.SUCCEEDED, Status.PENDING, Status.FAILED]
    assert isinstance(lean[0][1], TaskNotFound) and isinstance(lean[1][1], LeaseLost)
    row = ("SELECT status, result, state, last_error, attempts, worker, claim_token, "
           "run_after > now() AS later FROM tasks WHERE id = {}")
    detail = ("SELECT kind, actor, detail - 'at' AS detail FROM task_events "
              "WHERE task_id = {} AND kind <> 'enqueued' ORDER BY id")
    for x, y in ((a, b), (c, d), (e, f)):
        assert sync_rows(dsn, row.format(x.id)) == sync_rows(dsn, row.format(y.id))
        mine, theirs = sync_rows(dsn, detail.format(x.id)), sync_rows(dsn, detail.format(y.id))
        for ev in (*mine, *theirs):  # a claim's token differs by task, its shape does not
            ev["detail"].pop("claim", None)
            ev["detail"].pop("lease_expires_at", None)
        assert mine == theirs


async def test_settle_many_takes_one_kind_a_call(queue: TaskQueue) -> None:
    await enqueue(queue)
    [a] = await _claim(queue, 1)
    with pytest.raises(BadInput, match="one kind"):
        await queue.task_settle_many([Completion(a.id, "w", a.claim),  # type: ignore[list-item]
                                      Releasing(a.id, "w", a.claim)])
    assert (await queue.task_get(a.id)).status is Status.RUNNING
    assert await queue.task_settle_many([]) == []


def _recording(queue: TaskQueue, log: list[str]) -> Callable[[list[Completion]],
                                                              Awaitable[list[object]]]:
    """task_settle_many itself, noting `send N` in `log` as each batch goes out."""
    async def settle(items: list[Completion]) -> list[object]:
        log.append(f"send {len(items)}")
        return list(await queue.task_settle_many(items))
    return settle


async def test_outcome_buffer_applies_many_in_one_batch_and_fences_each(
        queue: TaskQueue) -> None:
    for _ in range(5):
        await enqueue(queue)
    tasks = await _claim(queue, 5)
    await queue.task_cancel(tasks[2].id)
    buffer = OutcomeBuffer(queue, flush_seconds=0.05)
    sent: list[str] = []
    buffer._apply = _recording(queue, sent)  # count the statements, not fake them
    results = await asyncio.gather(
        *(buffer.settle(Completion(t.id, "w", t.claim, {"i": i})) for i, t in enumerate(tasks)),
        return_exceptions=True)
    await buffer.aclose()
    assert len(sent) == 1
    assert isinstance(results[2], LeaseLost)
    assert [r for i, r in enumerate(results) if i != 2] == [Status.SUCCEEDED] * 4
    assert [(await queue.task_get(t.id)).result for t in tasks] == [
        {"i": 0}, {"i": 1}, None, {"i": 3}, {"i": 4}]


async def test_outcome_buffer_wakes_the_claimer_before_it_sends_the_batch(
        queue: TaskQueue) -> None:
    # The claim for the freed slots is what they wait on: it must go out first, with the
    # batch's commit overlapping it (the claimer's wake-up is queued ahead of the send).
    for _ in range(2):
        await enqueue(queue)
    tasks = await _claim(queue, 2)
    order: list[str] = []
    woken = asyncio.Event()

    async def claimer() -> None:
        await woken.wait()
        order.append("claim")

    waiting = asyncio.create_task(claimer())
    await asyncio.sleep(0)
    buffer = OutcomeBuffer(queue, flush_seconds=30, in_flight=lambda: 2, on_flush=woken.set)
    buffer._apply = _recording(queue, order)
    statuses = await asyncio.gather(*(buffer.settle(Completion(t.id, "w", t.claim))
                                      for t in tasks))
    await waiting
    assert order == ["claim", "send 2"]
    assert statuses == [Status.SUCCEEDED] * 2
    await buffer.aclose()


async def test_outcome_buffer_sends_at_once_when_every_slice_has_handed_in(
        queue: TaskQueue) -> None:
    for _ in range(3):
        await enqueue(queue)
    tasks = await _claim(queue, 3)
    flushed: list[float] = []
    loop = asyncio.get_running_loop()
    # Three slices alive: two outcomes wait for the (long) timer; the third completes the
    # set and all three go out at once, without waiting it out.
    buffer = OutcomeBuffer(queue, flush_seconds=30, in_flight=lambda: 3,
                           on_flush=lambda: flushed.append(loop.time()))
    first = [asyncio.create_task(buffer.settle(Completion(t.id, "w", t.claim)))
             for t in tasks[:2]]
    await asyncio.sleep(0.2)
    assert not any(f.done() for f in first) and flushed == []
    assert buffer.outstanding == 2
    started = loop.time()
    last = await buffer.settle(Completion(tasks[2].id, "w", tasks[2].claim))
    done = await asyncio.gather(*first)
    assert loop.time() - started < 20  # not the 30 s timer
    assert [*done, last] == [Status.SUCCEEDED] * 3
    assert len(flushed) == 1 and buffer.outstanding == 0
    await buffer.aclose()


async def test_outcome_buffer_still_waits_for_its_timer_while_a_slice_works(
        queue: TaskQueue) -> None:
    await enqueue(queue)
    [task] = await _claim(queue, 1)
    buffer = OutcomeBuffer(queue, flush_seconds=0.3, in_flight=lambda: 2)
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await buffer.settle(Completion(task.id, "w", task.claim))
    assert loop.time() - started >= 0.29
    assert result is Status.SUCCEEDED
    await buffer.aclose()


async def _noop(task: Task, ctx: TaskContext) -> Done:
    return Done({"id": task.id})


async def test_a_pool_drains_with_batched_claims_and_outcomes_exactly_once(
        queue: TaskQueue, dsn: str) -> None:
    ids = [await enqueue(queue) for _ in range(120)]
    async with running_pool(queue, run_of(_noop, CAP), concurrency=16) as pool:
        await wait_for(lambda: _all_done(queue), timeout=20)
    assert sorted(r.task_id for r in pool.reports) == ids
    rows = sync_rows(dsn, "SELECT kind, count(*) AS n FROM task_events "
                          "WHERE kind IN ('claimed', 'completed') GROUP BY kind ORDER BY kind")
    assert rows == [{"kind": "claimed", "n": 120}, {"kind": "completed", "n": 120}]


async def _all_done(queue: TaskQueue) -> bool:
    return await value(queue, "SELECT count(*) FROM tasks WHERE status <> 'succeeded'") == 0


async def test_a_pool_never_runs_more_handlers_than_its_concurrency(queue: TaskQueue) -> None:
    # Slots free when an outcome goes out (its commit overlaps the next claim); handlers
    # running at once still never exceed the concurrency.
    ids = [await enqueue(queue) for _ in range(60)]
    running, most = 0, 0

    async def counted(task: Task, ctx: TaskContext) -> Done:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.005 * (task.id % 3))
        running -= 1
        return Done()

    async with running_pool(queue, run_of(counted, CAP), concurrency=4) as pool:
        await wait_for(lambda: _all_done(queue), timeout=20)
    assert most == 4
    assert sorted(r.task_id for r in pool.reports) == ids
