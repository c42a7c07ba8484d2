"""The worker runtime in-process: outcomes, lease loss, timeouts, exceptions, wake-ups, logs."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import psycopg
import pytest

from taskqueue import Decision, Reaper, Status, Task, TaskQueue, WorkerConfig, WorkerPool
from taskqueue.runtime.runner import Signal, Stopping, claim_one, run_slice
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.worker_helpers import (
    events,
    run_of,
    running_pool,
    set_connections,
    wait_for,
    wait_status,
)


async def test_done_completes_the_task_with_its_result(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {"n": 7})
    async with running_pool(queue, run_of(h.quick)):
        task = await wait_status(queue, enq.id, "succeeded")
    assert task.result == {"n": 7}
    assert len(await events(queue, enq.id, "completed")) == 1


async def test_each_transition_is_one_structured_log_line(
        queue: TaskQueue, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    enq = await queue.task_enqueue("demo", {})
    async with running_pool(queue, run_of(h.quick), name="w-log"):
        await wait_status(queue, enq.id, "succeeded")
    lines = [r.getMessage() for r in caplog.records if "task transition" in r.getMessage()]
    assert lines == [
        f"task transition task={enq.id} capability=demo from=pending to=running worker=w-log",
        f"task transition task={enq.id} capability=demo from=running to=succeeded worker=w-log",
    ]


async def test_park_then_decision_resumes_with_the_decision(queue: TaskQueue,
                                                            caplog: pytest.LogCaptureFixture
                                                            ) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    enq = await queue.task_enqueue("demo", {})
    async with running_pool(queue, run_of(h.asks), name="w-park"):
        parked = await wait_status(queue, enq.id, "needs_approval")
        assert parked.approval is not None and parked.approval.request == {"to": "acme"}
        assert parked.state == {"draft": "v1"}
        await queue.approval_decide_for_task(enq.id, Decision.REVISED, "alice", "shorter")
        done = await wait_status(queue, enq.id, "succeeded")
    assert done.result == {"decision": "revised", "note": "shorter"}
    assert (f"task transition task={enq.id} capability=demo from=approved to=running "
            "worker=w-park") in caplog.text


async def test_lease_loss_cancels_the_handler_and_discards_its_outcome(
        queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {})
    async with running_pool(queue, run_of(h.stubborn, lease=3)) as pool:
        await wait_status(queue, enq.id, "running")
        await queue.task_cancel(enq.id, actor="operator")
        await wait_for(lambda: _async(bool(h.SEEN)))
        await wait_for(lambda: _async(bool(pool.reports)))
    assert [("cancelled", enq.id, True)] == h.SEEN
    assert pool.reports[0].outcome == "lease_lost" and pool.reports[0].status is None
    task = await queue.task_get(enq.id)
    assert task.status is Status.CANCELLED and task.result is None
    assert await events(queue, enq.id, "completed") == []


async def test_a_stolen_lease_never_completes_the_thiefs_task(queue: TaskQueue,
                                                              dsn: str) -> None:
    enq = await queue.task_enqueue("demo", {})

    async def lapse_and_reap() -> int:
        # The holder's heartbeat may renew the lease between the two statements; then again.
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("UPDATE tasks SET lease_expires_at = now() - interval '1 s' "
                         "WHERE id = %s", (enq.id,))
        return (await Reaper(queue).run_once()).requeued

    async with running_pool(queue, run_of(h.stubborn, lease=3)) as pool:
        await wait_status(queue, enq.id, "running")
        assert await wait_for(lapse_and_reap) == 1
        thief = await queue.task_claim("demo", "thief")
        assert thief is not None and thief.id == enq.id
        await wait_for(lambda: _async(bool(pool.reports)))
    assert pool.reports[0].outcome == "lease_lost"
    task = await queue.task_get(enq.id)
    assert task.status is Status.RUNNING and task.worker == "thief"
    await queue.task_complete(enq.id, "thief", claim=thief.claim)
    assert len(await events(queue, enq.id, "completed")) == 1


async def test_a_slice_past_its_timeout_fails_retryable(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {})
    async with running_pool(queue, run_of(h.stubborn, timeout=0.3)) as pool:
        task = await wait_for(lambda: _retried(queue, enq.id))
    assert task.status is Status.PENDING and task.attempts == 1
    assert task.last_error == "timed out after 0.3 s"
    assert pool.reports[0].outcome == "timeout"


async def test_an_exception_is_a_retryable_failure_with_its_traceback(queue: TaskQueue) -> None:
    await queue.capability_set("demo", retry_base_seconds=0)
    enq = await queue.task_enqueue("demo", {})
    async with running_pool(queue, run_of(h.crash_after_save)):
        done = await wait_status(queue, enq.id, "succeeded")
    [failed] = await events(queue, enq.id, "failed")
    assert failed.detail["to"] == "pending"
    assert "RuntimeError: boom after save" in failed.detail["traceback"]
    assert "crash_after_save" in failed.detail["traceback"]
    # The crash came after save_state: the resumed slice saw the saved state.
    assert [("resumed", enq.id, {"step": 1})] == h.SEEN
    assert done.result == {"state": {"step": 1}} and done.attempts == 1


async def test_a_non_outcome_return_is_a_failure(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {}, max_attempts=1)
    async with running_pool(queue, run_of(h.not_an_outcome)):
        task = await wait_status(queue, enq.id, "failed")
    assert task.last_error == "handler returned dict, not an outcome"


async def test_idle_pool_wakes_on_notify_within_a_second(queue: TaskQueue) -> None:
    async with running_pool(queue, run_of(h.quick), poll_interval=60) as pool:
        await wait_for(lambda: _async(pool.listener is not None and pool.listener.connected
                                      .is_set()))
        await asyncio.sleep(1)  # every slot has polled once and sleeps for a minute now
        started = time.monotonic()
        enq = await queue.task_enqueue("demo", {})
        await wait_status(queue, enq.id, "succeeded")
        # Woken by the NOTIFY, not by the next poll a minute away, even on a busy machine.
        assert time.monotonic() - started < 20


async def test_a_task_enqueued_before_the_pool_listens_runs_once_it_listens(
        queue: TaskQueue, dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    claims = 0
    claim_many = queue.task_claim_many

    async def counted(*args: Any, **kwargs: Any) -> list[Task]:
        nonlocal claims
        claims += 1
        return await claim_many(*args, **kwargs)

    monkeypatch.setattr(queue, "task_claim_many", counted)
    set_connections(dsn, allowed=False)  # the listener cannot connect; pooled ones stay
    try:
        async with running_pool(queue, run_of(h.quick), poll_interval=600) as pool:
            await wait_for(lambda: _async(claims >= 1))  # the start's claim found nothing
            enq = await queue.task_enqueue("demo", {})  # its NOTIFY reaches nobody
            assert pool.listener is not None and not pool.listener.connected.is_set()
            set_connections(dsn, allowed=True)
            # Claimed once the listener connects, not at the poll ten minutes away.
            await wait_status(queue, enq.id, "succeeded")
    finally:
        set_connections(dsn, allowed=True)


async def test_stop_asks_handlers_to_wrap_up_and_keeps_their_state(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {})
    async with running_pool(queue, run_of(h.cooperative)):
        await wait_for(lambda: _state_is(queue, enq.id, {"progress": 1}))
    task = await queue.task_get(enq.id)
    assert task.status is Status.PENDING and task.state == {"progress": 2}


async def test_stop_past_the_grace_releases_with_the_saved_state(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {})
    started = time.monotonic()
    async with running_pool(queue, run_of(h.drafted_then_hang), grace=0.3):
        await wait_for(lambda: _state_is(queue, enq.id, {"step": "drafted"}))
    assert time.monotonic() - started < 60  # the handler would hang for two minutes
    task = await queue.task_get(enq.id)
    assert task.status is Status.PENDING and task.state == {"step": "drafted"}
    assert task.attempts == 0
    [released] = await events(queue, enq.id, "released")
    assert released.detail["reason"] == "shutdown"


async def test_run_slice_applies_a_release_with_delay(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue("demo", {})

    async def later(task: object, ctx: object) -> h.Release:
        return h.Release({"page": 2}, delay=60)

    run = run_of(later)
    task = await claim_one(queue, run, "w1")
    assert task is not None
    report = await run_slice(queue, task, run, "w1", Stopping())
    assert report.outcome == "released" and report.status is Status.PENDING
    after = await queue.task_get(enq.id)
    assert after.state == {"page": 2} and after.run_after > after.updated_at


async def _async(value: object) -> object:
    return value


async def _retried(queue: TaskQueue, task_id: int) -> object:
    task = await queue.task_get(task_id)
    return task if task.attempts >= 1 and task.status is Status.PENDING else None


async def _state_is(queue: TaskQueue, task_id: int, state: dict[str, object]) -> bool:
    return (await queue.task_get(task_id)).state == state


async def test_the_slice_observer_hears_each_slice_and_its_failure_stops_nothing(
        queue: TaskQueue) -> None:
    heard: list[tuple[str, str, float]] = []

    def observe(capability: str, outcome: str, seconds: float) -> None:
        heard.append((capability, outcome, seconds))
        raise RuntimeError("an observer's bug")

    first, second = await queue.task_enqueue("demo", {}), await queue.task_enqueue("demo", {})
    pool = WorkerPool(queue, [run_of(h.quick)],
                      WorkerConfig(poll_interval=0.1, grace=5, on_slice=observe))
    runner = asyncio.create_task(pool.run())
    try:
        await wait_status(queue, first.id, "succeeded")
        await wait_status(queue, second.id, "succeeded")
    finally:
        pool.stop()
        await asyncio.wait_for(runner, 30)
    assert [(c, o) for c, o, _ in heard] == [("demo", "done"), ("demo", "done")]
    assert all(0 <= s < 5 for _, _, s in heard)


async def test_a_signal_calls_its_watchers_once_when_set_and_not_after_unwatch() -> None:
    signal, calls = Signal(), []
    stop_a = signal.watch(lambda: calls.append("a"))
    signal.watch(lambda: calls.append("b"))
    stop_a()
    assert calls == []
    signal.set()
    signal.set()  # already set: nobody is called twice
    assert calls == ["b"]
    signal.watch(lambda: calls.append("late"))  # set already: called at once
    assert calls == ["b", "late"]
    await asyncio.wait_for(signal.wait(), 1)  # still an asyncio.Event
