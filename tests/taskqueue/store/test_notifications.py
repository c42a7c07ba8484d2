"""The notification outbox: what is owed to people is written with the change that causes
it, and channels claim, deliver and mark it without ever sharing a row."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from taskqueue import Approval, BadInput, Decision, TaskQueue
from tests.taskqueue.worker_helpers import wait_for


async def _park(queue: TaskQueue, question: str = "Send it?", *,
                expires_in: float | None = None) -> Approval:
    task_id = (await queue.task_enqueue("jobs", {})).id
    task = await queue.task_claim("jobs", "w1")
    assert task is not None and task.id == task_id
    return await queue.task_park(task_id, "w1", question, claim=task.claim,
                                 expires_in=expires_in)


async def _kinds(queue: TaskQueue, task_id: int) -> list[tuple[str, str | None]]:
    rows = await queue.notification_list(task_id=task_id)
    return [(r["kind"], r["body"].get("outcome")) for r in rows]


async def test_a_park_owes_every_registered_channel_its_request(queue: TaskQueue) -> None:
    assert await queue.notification_channel_register("chat") == 0
    assert await queue.notification_channel_register("web") == 0
    approval = await _park(queue)
    rows = await queue.notification_list(task_id=approval.task_id)
    assert [(r["kind"], r["channel"], r["approval_id"]) for r in rows] == [
        ("approval_request", "chat", approval.id), ("approval_request", "web", approval.id)]
    [claimed] = await queue.notification_claim("chat", "s1")
    assert (claimed.kind, claimed.approval_id, claimed.settled) == (
        "approval_request", approval.id, False)


async def test_a_channel_registered_later_is_owed_the_open_questions_only(
        queue: TaskQueue) -> None:
    decided = await _park(queue, "Old?")
    await queue.approval_decide(decided.id, Decision.SKIPPED, "alice")
    waiting = await _park(queue, "Still open?")
    await queue.notification_send("Hello", "a message from before")
    assert await queue.notification_channel_register("late") == 1
    assert await queue.notification_channel_register("late") == 0  # once
    claimed = await queue.notification_claim("late", "s1")
    assert [(n.kind, n.approval_id) for n in claimed] == [("approval_request", waiting.id)]


async def test_a_channel_registered_while_a_park_commits_is_owed_its_question(
        queue: TaskQueue, dsn: str) -> None:
    """The park's fan-out runs before the channel exists and commits after the channel's
    backfill has looked: without the fence between them the question is owed to no one."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as held:
        # A park that stops after its fan-out, until this connection lets it commit.
        await held.execute("CREATE FUNCTION test_hold() RETURNS trigger LANGUAGE plpgsql AS"
                           " $$ BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NEW; END $$")
        await held.execute("CREATE TRIGGER zz_test_hold AFTER INSERT ON notifications "
                           "FOR EACH ROW EXECUTE FUNCTION test_hold()")
        await held.execute("SELECT pg_advisory_lock(4242)")

        async def waiting_on(locktype: str) -> bool:
            cur = await held.execute(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = %s "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (locktype,))
            row = await cur.fetchone()
            return bool(row and row[0])

        parking = asyncio.create_task(_park(queue))
        await wait_for(lambda: waiting_on("advisory"))
        registering = asyncio.create_task(queue.notification_channel_register("late"))

        async def looked_or_fenced() -> bool:
            return registering.done() or await waiting_on("relation")

        await wait_for(looked_or_fenced)
        await held.execute("SELECT pg_advisory_unlock(4242)")
        approval = await parking
        assert await registering == 1
    claimed = await queue.notification_claim("late", "s1")
    assert [(n.kind, n.approval_id) for n in claimed] == [("approval_request", approval.id)]
    # A channel known already does not wait for anyone: no fence, nothing owed twice.
    assert await queue.notification_channel_register("late") == 0


@pytest.mark.parametrize("decision", [Decision.APPROVED, Decision.REVISED, Decision.SKIPPED])
async def test_a_decision_closes_its_question_once(queue: TaskQueue, decision: Decision) -> None:
    approval = await _park(queue)
    await queue.approval_decide(approval.id, decision, "alice", note="n")
    assert await _kinds(queue, approval.task_id) == [
        ("approval_request", None), ("approval_closed", decision.value)]


async def test_expiry_and_cancel_close_the_question_too(queue: TaskQueue) -> None:
    expiring = await _park(queue, expires_in=0.01)
    await asyncio.sleep(0.05)
    assert len(await queue.approval_expire_many()) == 1
    assert ("approval_closed", "expired") in await _kinds(queue, expiring.task_id)
    cancelled = await _park(queue)
    await queue.task_cancel(cancelled.task_id)
    assert ("approval_closed", "cancelled") in await _kinds(queue, cancelled.task_id)
    # A retry and a new park closes nothing twice and asks the new question.
    await queue.task_retry(cancelled.task_id)
    task = await queue.task_claim("jobs", "w1")
    assert task is not None
    await queue.task_park(task.id, "w1", "Again?", claim=task.claim)
    kinds = await _kinds(queue, cancelled.task_id)
    assert kinds.count(("approval_closed", "cancelled")) == 1
    assert kinds.count(("approval_request", None)) == 2


async def test_a_request_settled_before_it_went_out_is_claimed_as_settled(
        queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    approval = await _park(queue)
    await queue.task_cancel(approval.task_id)
    request, closing = await queue.notification_claim("chat", "s1")
    assert (request.kind, request.settled) == ("approval_request", True)
    assert (closing.kind, closing.settled) == ("approval_closed", False)


async def test_a_parked_question_is_not_owed_when_its_transaction_rolls_back(
        queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    task_id = (await queue.task_enqueue("jobs", {})).id
    task = await queue.task_claim("jobs", "w1")
    assert task is not None
    with pytest.raises(BadInput):  # refused inside the park's transaction: nothing is kept
        await queue.task_park(task_id, "w1", "Q?", claim=task.claim, request={"x": "\x00"})
    assert await queue.notification_list(task_id=task_id) == []


async def test_two_senders_claiming_at_once_never_share_a_row(queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    for i in range(30):
        await queue.notification_send("s", f"message {i}")
    claims = await asyncio.gather(*(queue.notification_claim("chat", f"s{i}", limit=4)
                                    for i in range(6)))
    ids = [n.id for batch in claims for n in batch]
    assert len(ids) == len(set(ids)) == 24


async def test_a_dead_senders_rows_are_owed_again_after_its_short_lease(
        queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    await queue.notification_send("s", "t")
    [held] = await queue.notification_claim("chat", "dead", lease=0.3)
    assert await queue.notification_claim("chat", "alive") == []
    await asyncio.sleep(0.4)
    [again] = await queue.notification_claim("chat", "alive")
    assert again.id == held.id
    assert not await queue.notification_mark_delivered(held.id, "chat", "dead")
    assert await queue.notification_mark_delivered(again.id, "chat", "alive", {"m": 1})


async def test_a_live_sender_keeps_its_rows_by_renewing(queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    await queue.notification_send("s", "t")
    # Three renewals a second apart outlast the first lease; each needs only the one before
    # it to hold for two seconds.
    await queue.notification_claim("chat", "live", lease=2)
    for _ in range(3):
        await asyncio.sleep(1)
        assert await queue.notification_renew("chat", "live", lease=2) == 1
    assert await queue.notification_claim("chat", "other") == []


async def test_a_failed_row_backs_off_on_its_own_until_woken(queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    await queue.notification_send("s", "t")
    [row] = await queue.notification_claim("chat", "s1")
    assert await queue.notification_release(row.id, "chat", "s1", "502 Bad Gateway", 30)
    assert await queue.notification_claim("chat", "s1") == []
    due = await queue.notification_next_due("chat")
    assert due is not None and 25 < due <= 30
    await queue.notification_wake("chat")
    [again] = await queue.notification_claim("chat", "s1")
    assert (again.attempts, again.last_error) == (1, "502 Bad Gateway")
    assert await queue.notification_mark_delivered(again.id, "chat", "s1")
    assert await queue.notification_next_due("chat") is None


async def test_a_redelivery_is_owed_only_for_a_delivered_open_question(
        queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    approval = await _park(queue)
    assert not await queue.notification_redeliver(approval.id, "chat")  # not delivered yet
    [row] = await queue.notification_claim("chat", "s1")
    await queue.notification_mark_delivered(row.id, "chat", "s1", {"message_id": 7})
    assert await queue.notification_redeliver(approval.id, "chat")
    [again] = await queue.notification_claim("chat", "s1")
    assert (again.id, again.redelivery) == (row.id, True)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert not await queue.notification_redeliver(approval.id, "chat")


async def test_an_alert_is_owed_once_per_change_whoever_checks(queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    changed = await asyncio.gather(*(queue.alert_state_change("incident", True, {"count": 9})
                                     for _ in range(5)))
    assert sorted(changed) == [False] * 4 + [True]
    assert not await queue.alert_state_change("incident", True)
    assert await queue.alert_state_change("incident", False, {"count": 0})
    rows = await queue.notification_list(kind="alert")
    assert [(r["body"]["firing"], r["body"]["count"]) for r in rows] == [(True, 9), (False, 0)]


async def test_a_free_form_message_is_checked_and_owed(queue: TaskQueue) -> None:
    await queue.notification_channel_register("chat")
    for subject, text in (("", "t"), ("s" * 201, "t"), ("s", " "), ("s", "x" * 200_001)):
        with pytest.raises(BadInput):
            await queue.notification_send(subject, text)
    assert await queue.notification_list(kind="message") == []
    sent = await queue.notification_send("Briefing", "plain", html="<b>bold</b>")
    [row] = await queue.notification_claim("chat", "s1")
    assert (row.id, row.kind, row.body) == (
        sent, "message", {"subject": "Briefing", "text": "plain", "html": "<b>bold</b>"})


async def test_a_channel_name_is_checked(queue: TaskQueue) -> None:
    for bad in ("", "Chat", "1chat", "chat room", "x" * 64):
        with pytest.raises(BadInput):
            await queue.notification_channel_register(bad)
