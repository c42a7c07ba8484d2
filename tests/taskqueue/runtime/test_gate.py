"""The gated action's rules, each with the number of times `act` ran: only a person's approve
of exactly this fingerprint, read again right before; a marker under the claim first; at most
one act per approve, also under concurrency and across crashes (in-process and kill -9)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from taskqueue import (
    ActionUncertain,
    AlreadyActed,
    CapabilityRun,
    Gate,
    GatedAction,
    LeaseLost,
    NotApproved,
    NothingHappened,
    Reaper,
    Status,
    Task,
    TaskQueue,
    Tick,
    idempotency_key,
)
from tests.far_side import FarSide, running_far_side
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status

CAP = "gated"
SEND = {"kind": "message", "fingerprint": "fp-1", "text": "hello"}


class Far:
    """A stand-in far side that counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def act(self, action: GatedAction) -> dict[str, Any]:
        self.calls.append(action.key)
        return {"n": len(self.calls)}


async def sql(queue: TaskQueue, statement: str, *params: object) -> None:
    async with queue.pool.connection() as conn:
        await conn.execute(statement, params)  # type: ignore[arg-type]


async def parked(queue: TaskQueue, request: dict[str, Any] = SEND,
                 decision: str | None = "approved", note: str | None = None) -> int:
    """A task parked with `request` and decided (by alice) as `decision`."""
    task_id = (await queue.task_enqueue(CAP, {}, max_attempts=20)).id
    task = await queue.task_claim(CAP, "w0")
    assert task is not None and task.id == task_id
    await queue.task_park(task_id, "w0", "Send it?", claim=task.claim, request=request)
    if decision is not None:
        await queue.approval_decide_for_task(task_id, decision, "alice", note)
    return task_id


async def held(queue: TaskQueue, worker: str = "w1") -> Task:
    task = await queue.task_claim(CAP, worker)
    assert task is not None
    return task


def gate(queue: TaskQueue, task: Task, worker: str = "w1", **kw: Any) -> Gate:
    return Gate(queue, task, worker, "message", **kw)


async def reap(queue: TaskQueue) -> None:
    """The holder's lease lapses; the reaper puts the task back to pending."""
    await sql(queue, "UPDATE tasks SET lease_expires_at = now() - interval '1 second' "
                     "WHERE status = 'running'")
    assert (await Reaper(queue).run_once()).requeued == 1


async def test_an_approve_of_exactly_this_fingerprint_acts_once_and_records_it(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await held(queue)
    done = await gate(queue, task).run("fp-1", far.act, detail={"to": "ada"})
    assert far.calls == [idempotency_key(task_id, "message", "fp-1")]
    assert done.acted_now and done.result == {"n": 1} and done.action.approved_by == "alice"
    again = await gate(queue, task).run("fp-1", far.act)  # the same approve: its result
    assert len(far.calls) == 1 and not again.acted_now and again.result == {"n": 1}
    with pytest.raises(AlreadyActed):
        await gate(queue, task).begin("fp-1")
    [row] = await queue.gated_action_list(task_id)
    assert row.settled_by == "acted" and row.detail == {"to": "ada"} and row.attempts == 1


@pytest.mark.parametrize(("request_", "decision", "reason"), [
    ({**SEND, "fingerprint": "fp-2"}, "approved", "the approved fingerprint differs"),
    ({**SEND, "kind": "other"}, "approved", "a 'other' question, not 'message'"),
    (SEND, "revised", "the latest decision is revised"),
])
async def test_anything_but_an_approve_of_this_request_is_refused_without_acting(
        queue: TaskQueue, request_: dict[str, Any], decision: str, reason: str) -> None:
    task_id, far = await parked(queue, request_, decision, note="no"), Far()
    with pytest.raises(NotApproved, match=reason):
        await gate(queue, await held(queue)).run("fp-1", far.act)
    assert far.calls == [] and await queue.gated_action_list(task_id) == []


async def test_a_skip_an_expiry_no_decision_and_a_nameless_approve_are_refused(
        queue: TaskQueue) -> None:
    far = Far()
    # A skip ends the task; even set running again by hand, its approval permits nothing.
    skipped = await parked(queue, decision="skipped")
    await sql(queue, "UPDATE tasks SET status = 'pending', finished_at = NULL WHERE id = %s",
              skipped)
    with pytest.raises(NotApproved, match="the latest decision is skipped"):
        await gate(queue, await held(queue)).run("fp-1", far.act)
    await sql(queue, "UPDATE tasks SET status = 'cancelled' WHERE id = %s", skipped)
    # Decided by nobody: the approval expired, and the task is retried.
    expired = await parked(queue, decision=None)
    await sql(queue, "UPDATE approvals SET expires_at = now() - interval '1 second'")
    assert (await Reaper(queue).run_once()).expired == 1
    await queue.task_retry(expired)
    with pytest.raises(NotApproved, match="the latest decision is expired"):
        await gate(queue, await held(queue)).run("fp-1", far.act)
    await queue.task_cancel(expired)
    # Never asked at all.
    await queue.task_enqueue(CAP, {})
    with pytest.raises(NotApproved, match="the latest decision is none"):
        await gate(queue, await held(queue)).run("fp-1", far.act)
    await sql(queue, "UPDATE tasks SET status = 'cancelled' WHERE status = 'running'")
    # "Approved" with no person's name (written by hand).
    nameless = await parked(queue, decision="approved")
    await sql(queue, "UPDATE approvals SET decided_by = '  ' WHERE task_id = %s", nameless)
    with pytest.raises(NotApproved, match="names no person"):
        await gate(queue, await held(queue)).run("fp-1", far.act)
    assert far.calls == []


async def test_a_claim_stolen_between_the_check_and_the_marker_never_acts(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await held(queue, "w1")
    thief: list[Task] = []

    async def steal(step: str) -> None:  # another worker takes the task meanwhile
        if step == "verified" and not thief:
            await reap(queue)
            thief.append(await held(queue, "w2"))

    with pytest.raises(LeaseLost):
        await gate(queue, task, "w1", checkpoint=steal).run("fp-1", far.act)
    assert far.calls == [] and await queue.gated_action_list(task_id) == []
    done = await gate(queue, thief[0], "w2").run("fp-1", far.act)
    assert done.acted_now and len(far.calls) == 1
    with pytest.raises(LeaseLost):  # the old holder, called again: still nothing
        await gate(queue, task, "w1").run("fp-1", far.act)
    assert len(far.calls) == 1


async def test_concurrent_calls_under_one_approve_act_exactly_once(queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await held(queue)
    calls = [gate(queue, task).run("fp-1", far.act) for _ in range(8)]
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    acted = [o for o in outcomes if not isinstance(o, BaseException) and o.acted_now]
    assert len(far.calls) == 1 and len(acted) == 1
    # The losers found the marker: settled (the winner recorded first) or uncertain.
    assert all(isinstance(o, ActionUncertain) or not isinstance(o, BaseException)
               for o in outcomes), outcomes
    assert len(await queue.gated_action_list(task_id)) == 1


class Dies:
    """A checkpoint that never returns at `step`: the worker is dead from there on."""

    def __init__(self, step: str) -> None:
        self.step, self.hit = step, asyncio.Event()

    async def __call__(self, name: str) -> None:
        if name == self.step and not self.hit.is_set():
            self.hit.set()
            await asyncio.Future()


async def crashed_at(queue: TaskQueue, step: str, far: Far) -> Task:
    """Run the gate until it dies at `step`; the task reaped and claimed again by w2."""
    task = await held(queue, "w1")
    dies = Dies(step)
    running = asyncio.create_task(gate(queue, task, checkpoint=dies).run("fp-1", far.act))
    await asyncio.wait_for(dies.hit.wait(), 30)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await reap(queue)
    return await held(queue, "w2")


async def test_after_a_crash_past_the_marker_without_verify_it_asks_once(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await crashed_at(queue, "acted", far)
    assert len(far.calls) == 1  # it happened, and nothing recorded it
    with pytest.raises(ActionUncertain) as asked:
        await gate(queue, task, "w2").run("fp-1", far.act, check="the outbox")
    assert len(far.calls) == 1
    question, request = asked.value.question, asked.value.request
    assert "may already have happened: check the outbox" in question
    assert "approve to do it again or skip" in question
    assert request["kind"] == "message" and request["fingerprint"] == "fp-1"
    # Through the runtime, the same call parks the task with that one question.
    await sql(queue, "UPDATE tasks SET status = 'pending', worker = NULL, claim_token = NULL "
                     "WHERE id = %s", task_id)

    async def handler(t: Task, ctx: Any) -> Any:
        sent = await ctx.gated("message", "fp-1", far.act, check="the outbox")
        from taskqueue import Done
        return Done(sent.result)

    report = await Tick(queue, CapabilityRun(CAP, handler, lease=30), "w3").run_once()
    assert report.outcome == "parked"
    parked_task = await queue.task_get(task_id)
    assert parked_task.approval is not None and "may already" in parked_task.approval.question
    await queue.approval_decide_for_task(task_id, "approved", "bob")  # "do it again"
    assert (await Tick(queue, CapabilityRun(CAP, handler, lease=30), "w3").run_once()
            ).outcome == "done"
    assert len(far.calls) == 2 and (await queue.task_get(task_id)).result == {"n": 2}


async def test_after_a_crash_a_verify_that_finds_it_done_records_it_without_acting(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await crashed_at(queue, "acted", far)
    seen: list[GatedAction] = []

    async def happened(action: GatedAction) -> bool:
        seen.append(action)
        return len(far.calls) == 1

    done = await gate(queue, task, "w2").run("fp-1", far.act, verify=happened)
    assert len(far.calls) == 1 and not done.acted_now and len(seen) == 1
    [row] = await queue.gated_action_list(task_id)
    assert row.settled_by == "verified" and row.finished


async def test_after_a_crash_a_verify_that_finds_it_not_done_acts_once(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await crashed_at(queue, "marked", far)
    assert far.calls == []

    async def not_there(action: GatedAction) -> bool:
        return bool(far.calls)

    done = await gate(queue, task, "w2").run("fp-1", far.act, verify=not_there)
    assert done.acted_now and len(far.calls) == 1
    [row] = await queue.gated_action_list(task_id)
    assert row.attempts == 2 and row.settled_by == "acted"


async def test_a_verify_that_cannot_tell_asks(queue: TaskQueue) -> None:
    await parked(queue)
    far = Far()
    task = await crashed_at(queue, "marked", far)

    async def unsure(action: GatedAction) -> None:
        return None

    with pytest.raises(ActionUncertain):
        await gate(queue, task, "w2").run("fp-1", far.act, verify=unsure)
    assert far.calls == []


async def test_an_act_that_certainly_did_nothing_may_try_again_under_the_same_approve(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue), Far()
    task = await held(queue)

    async def refused(action: GatedAction) -> None:
        far.calls.append(action.key)
        raise NothingHappened("HTTP 400")

    with pytest.raises(NothingHappened):
        await gate(queue, task).run("fp-1", refused)
    assert await queue.gated_action_list(task_id) == []
    with pytest.raises(RuntimeError):  # may have happened: the marker stays
        await gate(queue, task).run("fp-1", _boom)
    with pytest.raises(ActionUncertain):
        await gate(queue, task).run("fp-1", far.act)
    assert len(far.calls) == 1


async def _boom(action: GatedAction) -> None:
    raise RuntimeError("the connection dropped after the request went out")


async def test_an_unapproved_handler_call_fails_the_task_through_the_runtime(
        queue: TaskQueue) -> None:
    task_id, far = await parked(queue, {**SEND, "fingerprint": "fp-2"}), Far()

    async def handler(t: Task, ctx: Any) -> Any:
        await ctx.gated("message", "fp-1", far.act)

    assert (await Tick(queue, CapabilityRun(CAP, handler, lease=30), "w1").run_once()
            ).outcome == "failed"
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and far.calls == []
    assert "refusing the gated action message: the approved fingerprint differs" in (
        task.last_error or "")


# -- real processes ---------------------------------------------------------------------


@pytest.fixture
async def far_side() -> AsyncIterator[FarSide]:
    async with running_far_side() as fake:
        yield fake


def _worker(dsn: str, far: FarSide, log: Path, crash_at: str | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1", "FAR_SIDE_URL": far.url}
    env.pop("SIGNOFF_CONFIG", None)
    if crash_at:
        env["SIGNOFF_GATETEST_CRASH_AT"] = crash_at
    cmd = [sys.executable, "-m", "taskqueue", "worker", "--capability", CAP, "--handler",
           "tests.taskqueue.gate_handlers:post_message", "--lease", "2", "--poll-interval",
           "0.2"]
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


@pytest.mark.slow
async def test_a_worker_killed_after_acting_asks_and_the_key_keeps_it_to_one_delivery(
        queue: TaskQueue, dsn: str, far_side: FarSide, tmp_path: Path) -> None:
    log = tmp_path / "workers.log"
    task_id = (await queue.task_enqueue(CAP, {"text": "hello"})).id
    first = _worker(dsn, far_side, log, crash_at="acted")
    second: subprocess.Popen[bytes] | None = None
    try:
        await wait_status(queue, task_id, "needs_approval", timeout=30)
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        # It posts, then dies (SIGKILL) before recording the result.
        assert await asyncio.wait_for(asyncio.to_thread(first.wait), 30) == -signal.SIGKILL
        assert far_side.requests == 1 and len(far_side.delivered) == 1
        second = _worker(dsn, far_side, log, crash_at=None)

        async def requeued() -> bool:
            return (await Reaper(queue).run_once()).requeued == 1

        await wait_for(requeued, timeout=20, every=0.3)
        asked = await wait_status(queue, task_id, "needs_approval", timeout=30)
        assert asked.approval is not None and "may already have happened" in \
            asked.approval.question, log.read_text()[-2000:]
        assert far_side.requests == 1  # asked, did not post again
        await queue.approval_decide_for_task(task_id, "approved", "alice")  # "again"
        done = await wait_status(queue, task_id, "succeeded", timeout=30)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                await asyncio.to_thread(proc.wait, 15)
    # Posted again with the same key: the far side answered the first result, delivered once.
    assert far_side.requests == 2 and len(far_side.delivered) == 1, log.read_text()[-2000:]
    assert done.result == {"sent": {"id": 1}, "acted_now": True}
    actions = await queue.gated_action_list(task_id)
    assert [a.finished for a in actions] == [False, True]
    assert actions[0].key == actions[1].key == idempotency_key(task_id, "message", "hello")
