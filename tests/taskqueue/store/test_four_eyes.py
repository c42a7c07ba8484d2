"""Four-eyes approvals: a request needing N approves resumes only once N distinct people
approved it; duplicates count once, a skip ends it, a revise discards, the requester's own
approve does not count, races settle to one outcome, and the gate never acts on fewer."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from taskqueue import (
    AlreadyApproved,
    AlreadyDecided,
    BadInput,
    Decision,
    Gate,
    GatedAction,
    NewAttachment,
    NotAnApprover,
    NotApproved,
    Reaper,
    Reminders,
    RemindReport,
    Status,
    TaskQueue,
)

from ..factories import CAP, PNG, backdate, claimed, enqueue, in_threads, parked, sql, value


async def _events(queue: TaskQueue, task_id: int, kind: str) -> list[Any]:
    return [e for e in (await queue.task_detail(task_id)).events if e.kind == kind]


async def test_required_comes_from_the_call_then_the_capability_then_one(
        queue: TaskQueue) -> None:
    _, default = await parked(queue)
    assert default.required == 1 and default.to_json()["required"] == 1
    cap = await queue.capability_set(CAP, required_approvals=2)
    assert cap.required_approvals == 2 and cap.to_json()["required_approvals"] == 2
    _, by_cap = await parked(queue)
    _, by_call = await parked(queue, required_approvals=3)
    assert (by_cap.required, by_call.required) == (2, 3)
    for bad in (0, 11, True):
        with pytest.raises(BadInput, match="required_approvals"):
            await queue.capability_set(CAP, required_approvals=bad)
    task = await claimed(queue)
    with pytest.raises(BadInput, match="required_approvals"):
        await queue.task_park(task.id, "w1", "Go?", claim=task.claim, required_approvals=0)
    assert (await queue.task_get(task.id)).status is Status.RUNNING  # nothing written


async def test_two_distinct_approves_resume_the_task_one_does_not(queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2)
    first = await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert first.is_open and first.decision is None and first.approved_count == 1
    assert first.progress() == "Approved by alice (1 of 2): waiting for a second person"
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL
    assert await queue.task_claim(CAP, "w2") is None
    [partly] = await _events(queue, task.id, "approved_partly")
    assert partly.actor == "alice" and partly.detail["approved"] == 1
    second = await queue.approval_decide_for_task(task.id, Decision.APPROVED, "bob")
    assert second.decision is Decision.APPROVED and second.decided_by == "bob"
    assert [v["by"] for v in second.to_json()["approvals"]] == ["alice", "bob"]
    assert (await queue.task_get(task.id)).status is Status.APPROVED
    shown = (await queue.task_detail(task.id)).approvals[-1].to_json()
    assert shown["required"] == 2 and [a["by"] for a in shown["approvals"]] == ["alice", "bob"]
    assert all(a["at"] for a in shown["approvals"])


async def test_the_same_person_twice_counts_once_with_a_clear_answer(queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    with pytest.raises(AlreadyApproved, match=r"alice already approved .* counts once") as err:
        await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    assert err.value.exit_code == 7 and (err.value.approved, err.value.required) == (1, 2)
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL
    assert await value(queue, "SELECT count(*) FROM approval_votes") == 1


async def test_an_approve_short_of_the_count_is_owed_to_every_channel(
        queue: TaskQueue) -> None:
    for channel in ("chat", "web"):
        await queue.notification_channel_register(channel)
    task, approval = await parked(queue, required_approvals=3)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    with pytest.raises(AlreadyApproved):  # refused: nothing more is owed
        await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "bob")
    progress = await queue.notification_list(task_id=task.id, kind="approval_progress")
    assert [(n["channel"], n["approval_id"], n["body"]) for n in progress] == [
        (channel, approval.id, {"approved": count, "required": 3, "by": by})
        for count, by in ((1, "alice"), (2, "bob")) for channel in ("chat", "web")]
    owed = await queue.notification_claim("web", "web-1", limit=10)
    assert [r.kind for r in owed] == ["approval_request", "approval_progress",
                                      "approval_progress"]
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert done.decision is Decision.APPROVED
    # The approve that completes the count closes the question instead.
    assert len(await queue.notification_list(task_id=task.id, kind="approval_progress")) == 4
    closed = await queue.notification_list(task_id=task.id, kind="approval_closed")
    assert [n["body"] for n in closed] == [{"outcome": "approved"}] * 2


async def test_a_single_approve_path_is_unchanged(queue: TaskQueue) -> None:
    task, approval = await parked(queue)
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert done.decision is Decision.APPROVED and done.decided_by == "alice"
    assert await queue.notification_list(task_id=task.id, kind="approval_progress") == []
    with pytest.raises(AlreadyDecided) as err:  # as before: decided, not "already approved"
        await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert err.value.decided_by == "alice"
    assert (await queue.task_get(task.id)).status is Status.APPROVED


async def test_a_skip_after_one_approve_ends_the_task(queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    skipped = await queue.approval_decide(approval.id, Decision.SKIPPED, "bob", "no")
    assert skipped.decision is Decision.SKIPPED and skipped.decided_by == "bob"
    assert (await queue.task_get(task.id)).status is Status.SKIPPED
    with pytest.raises(AlreadyDecided) as err:
        await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert err.value.decided_by == "bob"


async def test_a_revise_discards_the_approves_gathered(queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    revised = await queue.approval_decide(approval.id, Decision.REVISED, "bob", "shorter")
    assert revised.decision is Decision.REVISED and revised.note == "shorter"
    assert revised.approvals == ()
    assert await value(queue, "SELECT count(*) FROM approval_votes") == 0
    [gone] = await _events(queue, task.id, "approvals_discarded")
    assert gone.detail == {"approval_id": approval.id, "people": ["alice"]}
    assert (await queue.task_get(task.id)).status is Status.APPROVED  # back to the worker
    again = await queue.task_claim(CAP, "w1")
    assert again is not None and again.approval is not None
    assert again.approval.note == "shorter"
    fresh = await queue.task_park(again.id, "w1", "Now?", claim=again.claim,
                                  required_approvals=2)
    first = await queue.approval_decide(fresh.id, Decision.APPROVED, "alice")
    assert first.is_open and first.approved_count == 1  # alice's old approve is gone


async def test_the_requester_alone_never_completes_their_own_request(
        queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2,
                                  request={"requested_by": "alice"})
    own = await queue.approval_decide(approval.id, Decision.APPROVED, "Alice")
    assert own.is_open and own.approved_count == 0 and "does not count" in (own.progress() or "")
    bob = await queue.approval_decide(approval.id, Decision.APPROVED, "bob")
    assert bob.is_open and bob.approved_count == 1
    carol = await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert carol.decision is Decision.APPROVED
    assert (await queue.task_get(task.id)).status is Status.APPROVED
    # With one required, the requester's approve alone does not decide either.
    _, one = await parked(queue, "other", request={"requested_by": "dave"})
    assert (await queue.approval_decide(one.id, Decision.APPROVED, "dave")).is_open
    assert (await queue.approval_decide(one.id, Decision.APPROVED, "erin")).decided_by == "erin"


async def test_approvers_limit_who_may_decide(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approvers=["alice", "bob"])
    _, approval = await parked(queue)
    with pytest.raises(NotAnApprover, match="mallory is not an approver"):
        await queue.approval_decide(approval.id, Decision.SKIPPED, "mallory")
    assert (await queue.approval_get(approval.id)).is_open
    assert (await queue.approval_decide(approval.id, Decision.APPROVED, "bob")).decision \
        is Decision.APPROVED
    cap = await queue.capability_set(CAP, approvers=None)
    assert cap.approvers is None and cap.may_decide("mallory")
    with pytest.raises(BadInput):
        await queue.capability_set(CAP, approvers="alice")


def test_two_people_at_the_same_instant_resume_exactly_once(dsn: str) -> None:
    async def setup(q: TaskQueue, i: int) -> int:
        return (await parked(q, required_approvals=2))[1].id

    [approval_id] = in_threads(1, dsn, setup)

    async def approve(q: TaskQueue, i: int) -> bool:
        return (await q.approval_decide(approval_id, Decision.APPROVED, f"p{i}")).is_open

    for _ in range(1):
        still_open = in_threads(2, dsn, approve)
        assert sorted(still_open) == [False, True]  # one recorded 1 of 2, one resumed it

    async def check(q: TaskQueue, i: int) -> tuple[int, int]:
        a = await q.approval_get(approval_id)
        resumes = await value(q, "SELECT count(*) FROM task_events WHERE kind = 'decided' "
                                 "AND task_id = %s", a.task_id)
        return resumes, a.approved_count

    assert in_threads(1, dsn, check) == [(1, 2)]


def test_many_people_racing_on_two_of_two_resume_once(dsn: str) -> None:
    async def setup(q: TaskQueue, i: int) -> int:
        return (await parked(q, required_approvals=2))[1].id

    [approval_id] = in_threads(1, dsn, setup)

    async def approve(q: TaskQueue, i: int) -> str:
        try:
            a = await q.approval_decide(approval_id, Decision.APPROVED, f"p{i}")
        except AlreadyDecided as exc:
            return f"late:{exc.decided_by}"
        return "counted" if a.is_open else "resumed"

    outcomes = in_threads(6, dsn, approve)
    assert outcomes.count("resumed") == 1 and outcomes.count("counted") == 1
    assert len([o for o in outcomes if o.startswith("late:")]) == 4


def test_one_person_approving_twice_at_once_counts_once(dsn: str) -> None:
    async def setup(q: TaskQueue, i: int) -> int:
        return (await parked(q, required_approvals=2))[1].id

    [approval_id] = in_threads(1, dsn, setup)

    async def approve(q: TaskQueue, i: int) -> str:
        try:
            await q.approval_decide(approval_id, Decision.APPROVED, "alice")
        except AlreadyApproved:
            return "already"
        return "counted"

    assert sorted(in_threads(2, dsn, approve)) == ["already", "counted"]

    async def votes(q: TaskQueue, i: int) -> int:
        return int(await value(q, "SELECT count(*) FROM approval_votes"))

    assert in_threads(1, dsn, votes) == [1]


def test_approve_and_skip_racing_settle_to_one_outcome(dsn: str) -> None:
    async def setup(q: TaskQueue, i: int) -> int:
        return (await parked(q))[1].id

    [approval_id] = in_threads(1, dsn, setup)

    async def decide(q: TaskQueue, i: int) -> str:
        decision, who = (Decision.APPROVED, "alice") if i == 0 else (Decision.SKIPPED, "bob")
        try:
            await q.approval_decide(approval_id, decision, who)
        except AlreadyDecided as exc:
            return f"lost to {exc.decided_by}"
        return f"won {who}"

    outcomes = sorted(in_threads(2, dsn, decide))
    assert outcomes in (["lost to alice", "won alice"], ["lost to bob", "won bob"])


class Far:
    def __init__(self) -> None:
        self.calls = 0

    async def act(self, action: GatedAction) -> str:
        self.calls += 1
        return "done"


SEND = {"kind": "delete", "fingerprint": "vm-1"}


async def test_the_gate_never_acts_on_one_of_two(queue: TaskQueue) -> None:
    task, approval = await parked(queue, request=SEND, required_approvals=2)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    # The database refuses an approve past the count by hand (migration 0020)...
    forcing = ("UPDATE approvals SET decision = 'approved', decided_by = 'alice', "
               "decided_at = now() WHERE id = %s")
    with pytest.raises(psycopg.errors.CheckViolation, match="with 1 of 2 required approves"):
        await sql(queue, forcing, approval.id)
    # ...and forced past the database's rules (as a broken database might hold it), the
    # gate still refuses.
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute(forcing, (approval.id,))
    await sql(queue, "UPDATE tasks SET status = 'approved' WHERE id = %s", task.id)
    far = Far()
    held = await queue.task_claim(CAP, "w2")
    assert held is not None
    with pytest.raises(NotApproved, match="1 of 2 required people"):
        await Gate(queue, held, "w2", "delete").run("vm-1", far.act)
    assert far.calls == 0
    await sql(queue, "INSERT INTO approval_votes (approval_id, person) VALUES (%s, 'bob')",
              approval.id)
    done = await Gate(queue, held, "w2", "delete").run("vm-1", far.act)
    assert done.acted_now and far.calls == 1


async def test_a_reminder_then_an_escalation_each_exactly_once(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, remind_after_seconds=60, escalate_after_seconds=3600,
                               escalate_to=["carol"])
    task, approval = await parked(queue, required_approvals=2)
    assert await Reminders(queue).run_once() == RemindReport()  # not due yet
    fresh = (await queue.approval_get(approval.id)).to_json()
    assert (fresh["reminded_at"], fresh["escalated_at"]) == (None, None)
    await backdate(queue, "approvals", "created_at", "2 minutes", "id = %s", approval.id)
    first = await Reminders(queue).run_once()
    assert first == RemindReport(reminded=(approval.id,))
    assert await Reminders(queue).run_once() == RemindReport()  # once
    await backdate(queue, "approvals", "created_at", "2 hours", "id = %s", approval.id)
    await Reaper(queue).run_once()  # the reaper runs the reminders too
    assert await Reminders(queue).run_once() == RemindReport()
    shown = await queue.approval_get(approval.id)
    assert shown.reminded_at is not None and shown.escalated_at is not None
    assert shown.reminded_at < shown.escalated_at
    assert shown.to_json()["reminded_at"] and shown.to_json()["escalated_at"]
    [reminded] = await _events(queue, task.id, "reminded")
    [escalated] = await _events(queue, task.id, "escalated")
    assert reminded.detail == {"approval_id": approval.id}
    assert escalated.detail == {"approval_id": approval.id, "to": ["carol"]}
    sent = await queue.notification_list(task_id=task.id, kind="message")
    assert [n["body"].get("reminder") for n in sent] == [approval.id, None]
    assert sent[1]["body"]["escalate_to"] == ["carol"]
    assert sent[1]["body"]["escalation"] == approval.id
    # Decided: nothing more is sent.
    await queue.approval_decide(approval.id, Decision.SKIPPED, "bob")
    assert await Reminders(queue).run_once() == RemindReport()


def test_concurrent_runs_remind_exactly_once(dsn: str) -> None:
    async def setup(q: TaskQueue, i: int) -> int:
        await q.capability_set(CAP, remind_after_seconds=60)
        _, approval = await parked(q)
        await backdate(q, "approvals", "created_at", "2 minutes", "id = %s", approval.id)
        return approval.id

    [approval_id] = in_threads(1, dsn, setup)

    async def run(q: TaskQueue, i: int) -> tuple[int, ...]:
        return (await Reminders(q).run_once()).reminded

    results = in_threads(4, dsn, run)
    assert sorted(results) == [(), (), (), (approval_id,)]

    async def count(q: TaskQueue, i: int) -> int:
        return int(await value(q, "SELECT count(*) FROM task_events WHERE kind = 'reminded'"))

    assert in_threads(1, dsn, count) == [1]


async def test_a_task_claimed_after_two_approves_carries_them(queue: TaskQueue) -> None:
    _, approval = await parked(queue, required_approvals=2,
                               attachments=[NewAttachment("shot.png", PNG)])
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    await queue.approval_decide(approval.id, Decision.APPROVED, "bob")
    again = await queue.task_claim(CAP, "w2")
    assert again is not None and again.approval is not None
    assert again.approval.required == 2
    assert [(v.by, v.counted) for v in again.approval.approvals] == [("alice", True),
                                                                     ("bob", True)]
    # The claim path and approval_get read the same approval, field for field.
    assert again.approval == await queue.approval_get(approval.id)
    assert again.approval.to_json() == (await queue.approval_get(approval.id)).to_json()


async def test_a_task_claimed_back_after_a_partial_approve_shows_its_progress(
        queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2,
                                  request={"requested_by": "carol"})
    await queue.approval_decide(approval.id, Decision.APPROVED, "carol")  # not counted
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    await queue.capability_set(CAP, remind_after_seconds=60)
    await backdate(queue, "approvals", "created_at", "2 minutes", "id = %s", approval.id)
    assert await Reminders(queue).run_once() == RemindReport(reminded=(approval.id,))
    await queue.task_cancel(task.id)
    await queue.task_retry(task.id)
    [again] = await queue.task_claim_many(CAP, "w2", 5)
    assert again.approval is not None and again.approval.is_open
    assert again.approval.reminded_at is not None  # the claim reads it as approval_get does
    assert (again.approval.required, again.approval.approved_count) == (2, 1)
    assert again.approval.progress() == (
        "Approved by alice (1 of 2); carol asked for it, so their approve does not count: "
        "waiting for a second person")
    assert again.approval == await queue.approval_get(approval.id)


async def test_a_claimed_approval_without_approves_is_unchanged(queue: TaskQueue) -> None:
    _, one = await parked(queue)
    await enqueue(queue)  # never parked: no approval at all
    await queue.approval_decide(one.id, Decision.REVISED, "alice", note="again")
    [revised, fresh] = await queue.task_claim_many(CAP, "w2", 5)
    assert revised.approval == await queue.approval_get(one.id)
    assert revised.approval is not None and revised.approval.required == 1
    assert revised.approval.approvals == () and fresh.approval is None
