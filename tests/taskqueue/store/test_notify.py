"""Wake-ups: NOTIFY on enqueue, release and decisions (signoff_tasks) and on park (approvals)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
import pytest

from taskqueue import APPROVALS_CHANNEL, TASKS_CHANNEL, Decision, TaskQueue

from ..factories import CAP, claimed, parked


@pytest.fixture
async def listener(dsn: str) -> AsyncIterator[psycopg.AsyncConnection]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(f"LISTEN {TASKS_CHANNEL}")
        await conn.execute(f"LISTEN {APPROVALS_CHANNEL}")
        yield conn


async def _heard(conn: psycopg.AsyncConnection, expected: int = 1,
                 timeout: float = 1.0) -> list[tuple[str, str]]:
    """The first `expected` notifications, or those that arrive within `timeout` seconds."""
    return [(n.channel, n.payload)
            async for n in conn.notifies(timeout=timeout, stop_after=expected or None)]


async def test_enqueue_notifies_waiting_workers_within_a_second(
        queue: TaskQueue, listener: psycopg.AsyncConnection) -> None:
    await queue.task_enqueue(CAP)
    assert await _heard(listener) == [(TASKS_CHANNEL, CAP)]


async def test_a_dedupe_hit_notifies_nobody(queue: TaskQueue,
                                            listener: psycopg.AsyncConnection) -> None:
    await queue.task_enqueue(CAP, dedupe_key="k")
    await _heard(listener)
    await queue.task_enqueue(CAP, dedupe_key="k")
    assert await _heard(listener, 0, timeout=0.3) == []


async def test_park_notifies_the_approvals_channel(queue: TaskQueue,
                                                   listener: psycopg.AsyncConnection) -> None:
    task = await claimed(queue)
    await _heard(listener)
    approval = await queue.task_park(task.id, "w1", "Go?", claim=task.claim)
    assert await _heard(listener) == [(APPROVALS_CHANNEL, str(approval.id))]


async def test_approve_notifies_workers_and_the_approvals_channel(
        queue: TaskQueue, listener: psycopg.AsyncConnection) -> None:
    task, approval = await parked(queue)
    assert await _heard(listener, 2) == [(TASKS_CHANNEL, CAP),
                                         (APPROVALS_CHANNEL, str(approval.id))]
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    assert set(await _heard(listener, 2)) == {(APPROVALS_CHANNEL, str(approval.id)),
                                           (TASKS_CHANNEL, CAP)}


async def test_release_notifies_waiting_workers(queue: TaskQueue,
                                                listener: psycopg.AsyncConnection) -> None:
    task = await claimed(queue)
    await _heard(listener)
    await queue.task_release(task.id, "w1", claim=task.claim)
    assert await _heard(listener) == [(TASKS_CHANNEL, CAP)]


async def test_a_refused_call_notifies_nobody(queue: TaskQueue,
                                              listener: psycopg.AsyncConnection) -> None:
    task = await claimed(queue)
    await _heard(listener)
    with pytest.raises(Exception, match="lease lost"):
        await queue.task_release(task.id, "w2")
    assert await _heard(listener, 0, timeout=0.3) == []
