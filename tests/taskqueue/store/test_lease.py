"""The worker side: heartbeat, fencing, save_state, release, complete and fail with retries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from taskqueue import BadInput, LeaseLost, Reaper, Status, Task, TaskNotFound, TaskQueue

from ..factories import CAP, backdate, claimed, enqueue, sql, value

Call = Callable[[TaskQueue, int, str, "str | None"], Awaitable[Any]]

WORKER_CALLS: dict[str, Call] = {
    "heartbeat": lambda q, i, w, c: q.task_heartbeat(i, w, claim=c, lease=600),
    "save_state": lambda q, i, w, c: q.task_save_state(i, w, {"step": 9}, claim=c),
    "release": lambda q, i, w, c: q.task_release(i, w, claim=c, state={"step": 9}),
    "park": lambda q, i, w, c: q.task_park(i, w, "Go?", claim=c),
    "complete": lambda q, i, w, c: q.task_complete(i, w, claim=c, result={"ok": True}),
    "fail": lambda q, i, w, c: q.task_fail(i, w, "boom", claim=c),
}


async def _snapshot(queue: TaskQueue) -> list[Any]:
    return [await sql(queue, f"SELECT * FROM {table} ORDER BY id")
            for table in ("tasks", "approvals", "task_events")]


async def _refused(queue: TaskQueue, name: str, task_id: int, worker: str,
                   claim: str | None, error: type[Exception] = LeaseLost) -> None:
    """The call raises `error` and changes no task, approval or event."""
    before = await _snapshot(queue)
    try:
        await WORKER_CALLS[name](queue, task_id, worker, claim)
    except error:
        pass
    else:
        pytest.fail(f"{name} by {worker} with claim {claim} took effect")
    assert await _snapshot(queue) == before, name


# What each call leaves on the task it was given (read back from the database).
EFFECTS: dict[str, Callable[[Task], bool]] = {
    "heartbeat": lambda t: (t.status is Status.RUNNING and t.lease_expires_at is not None
                            and t.lease_expires_at > t.updated_at + timedelta(seconds=590)),
    "save_state": lambda t: t.status is Status.RUNNING and t.state == {"step": 9},
    "release": lambda t: t.status is Status.PENDING and t.state == {"step": 9}
    and t.worker is None,
    "park": lambda t: (t.status is Status.NEEDS_APPROVAL and t.approval is not None
                       and t.approval.question == "Go?" and t.approval.decision is None),
    "complete": lambda t: t.status is Status.SUCCEEDED and t.result == {"ok": True},
    "fail": lambda t: t.attempts == 1 and t.last_error == "boom" and t.worker is None,
}


async def test_worker_calls_take_effect_for_the_holder(queue: TaskQueue) -> None:
    for name, call in WORKER_CALLS.items():
        task = await claimed(queue, name)
        await call(queue, task.id, "w1", task.claim)
        after = await queue.task_get(task.id)
        assert EFFECTS[name](after), (name, after)
        other = await claimed(queue, f"{name}-2")
        await call(queue, other.id, "w1", None)  # fenced on the worker alone
        after = await queue.task_get(other.id)
        assert EFFECTS[name](after), (name, "no claim", after)


def test_each_effect_check_fails_on_a_task_the_call_never_touched() -> None:
    """The checks above can fail: a freshly claimed task satisfies none of them."""
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    untouched = Task(1, CAP, Status.RUNNING, 0, {}, {}, None, None, 0, 3, now, None, "w1",
                     "token", now + timedelta(seconds=60), now, now, now, None)
    assert [n for n, check in EFFECTS.items() if check(untouched)] == []


async def test_worker_calls_with_the_wrong_worker_are_lease_lost(queue: TaskQueue) -> None:
    for name in WORKER_CALLS:
        task = await claimed(queue, name)
        await _refused(queue, name, task.id, "w2", task.claim)
        await _refused(queue, name, task.id, "w2", None)


async def test_worker_calls_with_a_stale_claim_are_lease_lost(queue: TaskQueue) -> None:
    for name, call in WORKER_CALLS.items():
        task = await claimed(queue, name)
        # The same worker claims the task again: the first claim's token is stale.
        await queue.task_release(task.id, "w1", claim=task.claim)
        again = await queue.task_claim(name, "w1")
        assert again is not None and again.id == task.id and again.claim != task.claim
        await _refused(queue, name, task.id, "w1", task.claim)
        await call(queue, task.id, "w1", again.claim)


async def test_worker_calls_on_a_missing_task_are_task_not_found(queue: TaskQueue) -> None:
    for name in WORKER_CALLS:
        await _refused(queue, name, 999_999, "w1", None, TaskNotFound)


async def test_worker_calls_after_the_reaper_took_the_task_are_lease_lost(
        queue: TaskQueue) -> None:
    for name in WORKER_CALLS:
        task = await claimed(queue, name)
        await backdate(queue, "tasks", "lease_expires_at", "1 s", "id = %s", task.id)
        assert (await Reaper(queue).run_once()).requeued == 1
        await _refused(queue, name, task.id, "w1", task.claim)
        await _refused(queue, name, task.id, "w1", None)
        taker = await queue.task_claim(name, "w2")
        assert taker is not None and taker.id == task.id
        await _refused(queue, name, task.id, "w1", task.claim)


async def test_worker_calls_after_cancel_are_lease_lost(queue: TaskQueue) -> None:
    for name in WORKER_CALLS:
        task = await claimed(queue, name)
        cancelled = await queue.task_cancel(task.id, actor="ops")
        assert cancelled.status is Status.CANCELLED and cancelled.worker is None
        await _refused(queue, name, task.id, "w1", task.claim)


async def test_worker_calls_with_a_malformed_claim_token_are_bad_input(
        queue: TaskQueue) -> None:
    for name in WORKER_CALLS:
        task = await claimed(queue, name)
        await _refused(queue, name, task.id, "w1", "not-a-uuid", BadInput)


async def test_lease_lost_names_the_status_and_the_holder(queue: TaskQueue) -> None:
    task = await claimed(queue)
    with pytest.raises(LeaseLost, match="running, held by w1; w2 no longer holds it"):
        await queue.task_heartbeat(task.id, "w2")


async def test_heartbeat_extends_the_lease(queue: TaskQueue) -> None:
    await enqueue(queue)
    task = await queue.task_claim(CAP, "w1", lease=5)
    assert task is not None and task.lease_expires_at is not None
    beat = await queue.task_heartbeat(task.id, "w1", claim=task.claim, lease=600)
    assert beat.lease_expires_at is not None
    assert (beat.lease_expires_at - task.lease_expires_at).total_seconds() > 590
    default = await queue.task_heartbeat(task.id, "w1", claim=task.claim)
    assert default.lease_expires_at is not None
    left = (default.lease_expires_at - default.updated_at).total_seconds()
    assert left == pytest.approx(300, abs=1)
    assert default.status is Status.RUNNING and default.claim == task.claim


async def test_heartbeat_uses_the_capability_lease(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, lease_seconds=42)
    task = await claimed(queue)
    beat = await queue.task_heartbeat(task.id, "w1", claim=task.claim)
    assert beat.lease_expires_at is not None
    assert (beat.lease_expires_at - beat.updated_at).total_seconds() == pytest.approx(42, abs=1)


async def test_heartbeat_keeps_a_task_from_the_reaper(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await backdate(queue, "tasks", "lease_expires_at", "1 s", "id = %s", task.id)
    await queue.task_heartbeat(task.id, "w1", claim=task.claim)
    assert (await Reaper(queue).run_once()).requeued == 0
    assert (await queue.task_get(task.id)).status is Status.RUNNING


async def test_save_state_keeps_the_task_running_with_its_new_state(queue: TaskQueue) -> None:
    task = await claimed(queue)
    saved = await queue.task_save_state(task.id, "w1", {"page": 3}, claim=task.claim)
    assert saved.status is Status.RUNNING and saved.state == {"page": 3}
    assert saved.claim == task.claim
    assert (await queue.task_detail(task.id)).events[-1].kind == "state_saved"


async def test_release_returns_the_task_to_pending_with_its_state(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await queue.task_save_state(task.id, "w1", {"page": 3}, claim=task.claim)
    released = await queue.task_release(task.id, "w1", claim=task.claim, reason="slice done")
    assert released.status is Status.PENDING and released.state == {"page": 3}
    assert released.worker is None and released.claim is None
    assert released.lease_expires_at is None and released.attempts == 0
    event = (await queue.task_detail(task.id)).events[-1]
    assert event.kind == "released" and event.detail["reason"] == "slice done"
    again = await queue.task_claim(CAP, "w2")
    assert again is not None and again.state == {"page": 3}


async def test_release_with_a_state_replaces_it(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await queue.task_save_state(task.id, "w1", {"page": 3}, claim=task.claim)
    released = await queue.task_release(task.id, "w1", claim=task.claim, state={"page": 4})
    assert released.state == {"page": 4}


async def test_release_with_a_delay_holds_the_task_back(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await queue.task_release(task.id, "w1", claim=task.claim, delay=60)
    assert await queue.task_claim(CAP, "w1") is None
    ahead = await value(queue, "SELECT extract(epoch FROM run_after - updated_at) FROM tasks")
    assert ahead == 60


async def test_complete_ends_the_task_succeeded_with_its_result(queue: TaskQueue) -> None:
    task = await claimed(queue)
    done = await queue.task_complete(task.id, "w1", claim=task.claim, result={"url": "x"})
    assert done.status is Status.SUCCEEDED and done.result == {"url": "x"}
    assert done.worker is None and done.claim is None and done.lease_expires_at is None
    assert done.finished_at is not None
    assert (await queue.task_detail(task.id)).events[-1].kind == "completed"
    assert await queue.task_claim(CAP, "w1") is None


async def _fail_seconds_ahead(queue: TaskQueue, worker: str = "w1") -> float:
    """Backdate the pending task's run_after to now, claim it, fail it: the backoff."""
    await sql(queue, "UPDATE tasks SET run_after = now() WHERE status = 'pending'")
    task = await queue.task_claim(CAP, worker)
    assert task is not None
    failed = await queue.task_fail(task.id, worker, f"boom {task.attempts}", claim=task.claim)
    return (failed.run_after - failed.updated_at).total_seconds()


async def test_fail_backs_off_exponentially_then_fails_with_the_last_error(
        queue: TaskQueue) -> None:
    task_id = await enqueue(queue)
    assert await _fail_seconds_ahead(queue) == pytest.approx(30, abs=1)
    assert await queue.task_claim(CAP, "w1") is None
    task = await queue.task_get(task_id)
    assert (task.status, task.attempts, task.last_error) == (Status.PENDING, 1, "boom 0")
    assert await _fail_seconds_ahead(queue) == pytest.approx(60, abs=1)
    await _fail_seconds_ahead(queue)
    task = await queue.task_get(task_id)
    assert (task.status, task.attempts, task.last_error) == (Status.FAILED, 3, "boom 2")
    assert task.finished_at is not None and task.worker is None
    kinds = [e.kind for e in (await queue.task_detail(task_id)).events]
    assert kinds == ["enqueued"] + ["claimed", "failed"] * 3


async def test_fail_without_retry_fails_at_once(queue: TaskQueue) -> None:
    task = await claimed(queue)
    failed = await queue.task_fail(task.id, "w1", "fatal", claim=task.claim, retry=False,
                                   traceback="Traceback ...")
    assert (failed.status, failed.attempts, failed.last_error) == (Status.FAILED, 1, "fatal")
    event = (await queue.task_detail(task.id)).events[-1]
    assert event.detail["to"] == "failed" and event.detail["traceback"] == "Traceback ..."


async def test_max_attempts_comes_from_the_capability_and_the_task(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_attempts=1, retry_base_seconds=0)
    task = await claimed(queue)
    assert (await queue.task_fail(task.id, "w1", "x", claim=task.claim)).status is Status.FAILED
    task = await claimed(queue, max_attempts=5)
    for attempt in range(1, 5):
        failed = await queue.task_fail(task.id, "w1", "x", claim=task.claim)
        assert (failed.status, failed.attempts) == (Status.PENDING, attempt)
        reclaimed = await queue.task_claim(CAP, "w1")
        assert reclaimed is not None
        task = reclaimed
    assert (await queue.task_fail(task.id, "w1", "x", claim=task.claim)).status is Status.FAILED


async def test_fail_keeps_a_given_state_for_the_retry(queue: TaskQueue) -> None:
    task = await claimed(queue)
    failed = await queue.task_fail(task.id, "w1", "x", claim=task.claim, state={"page": 2})
    assert failed.state == {"page": 2}


async def test_worker_calls_refuse_bad_input(offline: TaskQueue) -> None:
    with pytest.raises(BadInput, match="lease"):
        await offline.task_heartbeat(1, "w1", lease=0)
    with pytest.raises(BadInput, match="delay"):
        await offline.task_release(1, "w1", delay=-1)
    with pytest.raises(BadInput, match="error"):
        await offline.task_fail(1, "w1", "  ")
    with pytest.raises(BadInput, match="question"):
        await offline.task_park(1, "w1", "")
    with pytest.raises(BadInput, match="expires"):
        await offline.task_park(1, "w1", "Go?", expires_in=0)


async def test_json_that_jsonb_cannot_store_is_bad_input_and_changes_nothing(
        queue: TaskQueue) -> None:
    with pytest.raises(BadInput, match=r"payload holds a \\u0000"):
        await queue.task_enqueue("nul", {"text": "a\x00b"})
    assert await queue.task_list() == []
    await queue.task_enqueue("nul", {"text": "fine"})
    task = await queue.task_claim("nul", "w1")
    assert task is not None
    with pytest.raises(BadInput, match=r"request holds a \\u0000"):
        await queue.task_park(task.id, "w1", "Go?", claim=task.claim, request={"k": ["\x00"]})
    with pytest.raises(BadInput, match=r"result holds a \\u0000"):
        await queue.task_complete(task.id, "w1", claim=task.claim, result={"\x00": 1})
    assert (await queue.task_get(task.id)).status is Status.RUNNING
    assert (await queue.task_detail(task.id)).approvals == ()
