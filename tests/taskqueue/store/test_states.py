"""The TRANSITIONS table against what the API really does, read back from task_events."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from taskqueue import Conflict, Decision, Reaper, Status, TaskQueue
from taskqueue.store.states import (
    CLAIMABLE,
    FINISHED,
    RETRYABLE,
    TRANSITIONS,
    UNFINISHED,
    allowed,
)

from ..factories import backdate, claimed, parked, sql, task_in, value

# The event kind each call (or service) writes for the transitions it makes.
CALL_OF_KIND = {"claimed": "claim", "released": "release", "parked": "park",
                "completed": "complete", "failed": "fail", "decided": "decide",
                "reaped": "reap", "expired": "reap", "retried": "retry", "cancelled": "cancel"}


async def _every_transition(queue: TaskQueue) -> None:
    """Drive tasks through every move the table allows."""
    task, _ = await parked(queue, "a")  # claim pending→running, park
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    again = await queue.task_claim("a", "w1")  # claim approved→running
    assert again is not None
    await queue.task_release(again.id, "w1", claim=again.claim)
    again = await queue.task_claim("a", "w1")
    assert again is not None
    await queue.task_complete(again.id, "w1", claim=again.claim)

    task = await claimed(queue, "b")
    await queue.task_fail(task.id, "w1", "x", claim=task.claim)  # → pending
    await sql(queue, "UPDATE tasks SET run_after = now() WHERE id = %s", task.id)
    retried = await queue.task_claim("b", "w1")
    assert retried is not None and retried.id == task.id
    task = retried
    await queue.task_fail(task.id, "w1", "x", claim=task.claim, retry=False)  # → failed
    await queue.task_retry(task.id)

    task, _ = await parked(queue, "c")
    await queue.approval_decide_for_task(task.id, Decision.SKIPPED, "alice")
    asked, _ = await queue.request_park("asked", "Deploy?", asked_by="agent:ci")
    await queue.approval_decide_for_task(asked.id, Decision.APPROVED, "alice")  # → succeeded

    lapsed = await claimed(queue, "d")
    dying = await claimed(queue, "e", max_attempts=1)
    _, late = await parked(queue, "f")
    await backdate(queue, "tasks", "lease_expires_at", "1 s", "id IN (%s, %s)",
                   lapsed.id, dying.id)
    await backdate(queue, "approvals", "expires_at", "1 s", "id = %s", late.id)
    await Reaper(queue).run_once()
    await queue.task_retry(late.task_id)

    for status in (Status.PENDING, Status.RUNNING, Status.NEEDS_APPROVAL, Status.APPROVED):
        cancelled = await task_in(queue, status, capability=f"cancel-{status}")
        await queue.task_cancel(cancelled)
        if status is Status.PENDING:
            await queue.task_retry(cancelled)


async def test_the_api_makes_exactly_the_transitions_of_the_table(queue: TaskQueue) -> None:
    await _every_transition(queue)
    observed: dict[str, set[tuple[Status, Status]]] = defaultdict(set)
    # An ask is a birth, as an enqueue is; a request's done records a result, not a move.
    for e in await sql(queue, "SELECT kind, detail FROM task_events "
                              "WHERE kind NOT IN ('enqueued', 'asked', 'request_done')"):
        old, new = Status(e["detail"]["from"]), Status(e["detail"]["to"])
        call = CALL_OF_KIND[e["kind"]]
        assert allowed(call, old, new), (call, old, new)
        observed[call].add((old, new))
    assert dict(observed) == {call: set(moves) for call, moves in TRANSITIONS.items()}


async def test_retry_refuses_every_status_it_cannot_leave(queue: TaskQueue) -> None:
    for status in set(Status) - RETRYABLE:
        task_id = await task_in(queue, status, capability=status)
        with pytest.raises(Conflict, match=f"is {status}"):
            await queue.task_retry(task_id)
        assert (await queue.task_get(task_id)).status is status


async def test_cancel_refuses_every_finished_status(queue: TaskQueue) -> None:
    for status in FINISHED:
        task_id = await task_in(queue, status, capability=status)
        with pytest.raises(Conflict, match=f"is {status}"):
            await queue.task_cancel(task_id)
        assert (await queue.task_get(task_id)).status is status


async def test_statuses_match_the_database_check(queue: TaskQueue) -> None:
    definition = await value(queue, "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                                    "WHERE conname = 'tasks_status_check'")
    assert set(re.findall(r"'(\w+)'::text", definition)) == {s.value for s in Status}


def test_status_groups_partition_the_statuses() -> None:
    assert {s.value for s in Status} == {
        "pending", "running", "needs_approval", "approved", "succeeded", "failed",
        "skipped", "expired", "cancelled"}
    assert set(Status) == UNFINISHED | FINISHED and not UNFINISHED & FINISHED
    assert CLAIMABLE <= UNFINISHED and RETRYABLE <= FINISHED
    assert Status.SUCCEEDED not in RETRYABLE and Status.SKIPPED not in RETRYABLE


def test_allowed_reads_the_table() -> None:
    assert allowed("claim", Status.APPROVED, Status.RUNNING)
    assert not allowed("claim", Status.NEEDS_APPROVAL, Status.RUNNING)
    assert not allowed("complete", Status.PENDING, Status.SUCCEEDED)
    assert not allowed("no-such-call", Status.PENDING, Status.RUNNING)
