"""A claim commits without waiting for its WAL flush (docs/semantics.md, "Claims commit
without waiting for the disk"). On a server of the test's own, crashed with an immediate stop:
a claim with nothing committed after it is lost and runs again, once, and the lost claim's
holder can neither mark a gated action nor complete; a claim followed by a synchronous commit
(the gate's started marker, a completion) survives. The setting never outlives the claim's
own transaction on a pooled connection."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from taskqueue import Decision, GatedAction, LeaseLost, Status, Task, TaskQueue, migrate
from tests.replication import Server, own_server
from tests.taskqueue.factories import CAP, enqueue, parked

pytestmark = pytest.mark.slow

# The WAL writer waits 10 s between rounds and nothing else commits: a claim's commit record
# sits in the server's WAL buffers, unwritten, until a synchronous commit flushes it.
LAZY_WAL_WRITER = """
wal_writer_delay = 10000ms
autovacuum = off
checkpoint_timeout = 3600
"""


@pytest.fixture
def server() -> Iterator[Server]:
    with own_server(LAZY_WAL_WRITER) as s:
        yield s


async def _crash(server: Server) -> None:
    await asyncio.to_thread(server.crash)
    await asyncio.to_thread(server.start)


def _events(dsn: str, task_id: int) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [r[0] for r in conn.execute(
            "SELECT kind FROM task_events WHERE task_id = %s AND kind IN "
            "('claimed', 'completed') ORDER BY id", (task_id,))]


async def _approved_and_claimed(queue: TaskQueue) -> tuple[Task, int]:
    """A task parked, approved by ada and claimed back by w1; the claimed task and the
    approval's id."""
    task, approval = await parked(queue, request={"send": "hello"})
    await queue.approval_decide(approval.id, Decision.APPROVED, "ada")
    back = await queue.task_claim(CAP, "w1")
    assert back is not None and back.id == task.id
    return back, approval.id


async def _mark(queue: TaskQueue, task: Task, approval_id: int) -> GatedAction | None:
    """w1's started marker for the approve, under `task`'s claim."""
    return await queue.gated_action_start(
        task.id, "w1", task.claim, approval_id=approval_id, kind="send",
        fingerprint="f" * 64, key=str(uuid.uuid4()))


async def test_a_claim_lost_in_a_crash_runs_again_once(server: Server) -> None:
    await migrate(server.dsn)
    async with TaskQueue.connect(server.dsn) as queue:
        task_id = await enqueue(queue)
        lost = await queue.task_claim(CAP, "w1")
        assert lost is not None and lost.id == task_id
    await _crash(server)

    async with TaskQueue.connect(server.dsn) as queue:
        task = await queue.task_get(task_id)
        assert (task.status, task.worker, task.first_claimed_at) == (Status.PENDING, None, None)
        with pytest.raises(LeaseLost):
            await queue.task_heartbeat(task_id, "w1", claim=lost.claim)
        again = await queue.task_claim(CAP, "w2")
        assert again is not None and again.id == task_id and again.claim != lost.claim
        with pytest.raises(LeaseLost):
            await queue.task_complete(task_id, "w1", claim=lost.claim)
        await queue.task_complete(task_id, "w2", claim=again.claim)
    assert _events(server.dsn, task_id) == ["claimed", "completed"]


async def test_the_gates_marker_makes_the_claim_before_it_durable(server: Server) -> None:
    await migrate(server.dsn)
    async with TaskQueue.connect(server.dsn) as queue:
        back, approval_id = await _approved_and_claimed(queue)
        assert await _mark(queue, back, approval_id) is not None
    await _crash(server)

    async with TaskQueue.connect(server.dsn) as queue:
        view = await queue.gated_action_check(back.id)
        assert (view.status, view.worker, view.claim) == (Status.RUNNING, "w1", back.claim)
        assert view.action is not None and view.action.claim == back.claim
        done = await queue.gated_action_finish(view.action, "w1", back.claim, {"sent": 1})
        assert done is not None
        await queue.task_complete(back.id, "w1", claim=back.claim, result={"sent": 1})
    await _crash(server)

    async with TaskQueue.connect(server.dsn) as queue:
        finished = await queue.task_get(back.id)
        assert finished.status is Status.SUCCEEDED and finished.result == {"sent": 1}


async def test_a_lost_claims_holder_cannot_mark_a_gated_action(server: Server) -> None:
    await migrate(server.dsn)
    async with TaskQueue.connect(server.dsn) as queue:
        lost, approval_id = await _approved_and_claimed(queue)
    await _crash(server)

    async with TaskQueue.connect(server.dsn) as queue:
        with pytest.raises(LeaseLost):
            await _mark(queue, lost, approval_id)
        view = await queue.gated_action_check(lost.id)
        assert view.status == Status.APPROVED and view.worker is None and view.action is None
        assert view.decision is Decision.APPROVED  # the decision was synchronous: it stays


async def test_the_setting_ends_with_the_claims_own_transaction(dsn: str) -> None:
    async with TaskQueue.connect(dsn, min_size=1, max_size=1) as queue:
        await enqueue(queue)
        assert await queue.task_claim(CAP, "w1") is not None
        async with queue.pool.connection() as conn:  # the same, only connection
            cur = await conn.execute("SHOW synchronous_commit")
            row = await cur.fetchone()
    assert row is not None and row["synchronous_commit"] == "on"
