"""task_events: every change the API makes is logged in its own transaction, append-only."""

from __future__ import annotations

import psycopg
import pytest

from taskqueue import Decision, NewAttachment, NewTask, Status, TaskQueue

from ..factories import CAP, claimed, enqueue, sql, value


async def test_a_full_lifecycle_writes_one_event_per_change_in_order(queue: TaskQueue) -> None:
    task_id = await enqueue(queue, actor="scheduler")
    task = await queue.task_claim(CAP, "w1")
    assert task is not None
    await queue.task_heartbeat(task.id, "w1", claim=task.claim)
    await queue.task_save_state(task.id, "w1", {"step": 1}, claim=task.claim)
    await queue.task_release(task.id, "w1", claim=task.claim)
    task = await queue.task_claim(CAP, "w1")
    assert task is not None
    await queue.task_park(task.id, "w1", "Go?", claim=task.claim)
    await queue.approval_decide_for_task(task_id, Decision.REVISED, "alice", note="shorter")
    task = await queue.task_claim(CAP, "w2")
    assert task is not None
    await queue.task_fail(task.id, "w2", "flaky", claim=task.claim)
    await sql(queue, "UPDATE tasks SET run_after = now()")
    task = await queue.task_claim(CAP, "w2")
    assert task is not None
    await queue.task_complete(task.id, "w2", claim=task.claim, result={"ok": True})
    events = (await queue.task_detail(task_id)).events
    assert [(e.kind, e.actor) for e in events] == [
        ("enqueued", "scheduler"), ("claimed", "w1"), ("state_saved", "w1"),
        ("released", "w1"), ("claimed", "w1"), ("parked", "w1"), ("decided", "alice"),
        ("claimed", "w2"), ("failed", "w2"), ("claimed", "w2"), ("completed", "w2")]
    assert [e.at for e in events] == sorted(e.at for e in events)


async def _refuse_inserts(queue: TaskQueue, table: str, condition: str) -> None:
    """Make the database refuse some inserts into `table`, as a full disk or a bug would."""
    await sql(queue, f"""
        CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF {condition} THEN RAISE EXCEPTION 'refused by the test'; END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER refuse BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION refuse();
    """)


async def test_a_change_whose_event_cannot_be_written_is_not_made(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await _refuse_inserts(queue, "task_events", "NEW.kind = 'completed'")
    with pytest.raises(psycopg.errors.RaiseException):
        await queue.task_complete(task.id, "w1", claim=task.claim, result={"ok": True})
    stored = await queue.task_get(task.id)
    assert (stored.status, stored.claim, stored.result) == (Status.RUNNING, task.claim, None)


async def test_a_park_whose_approval_cannot_be_written_leaves_the_task_running(
        queue: TaskQueue) -> None:
    task = await claimed(queue)
    await _refuse_inserts(queue, "approval_attachments", "true")
    with pytest.raises(psycopg.errors.RaiseException):
        await queue.task_park(task.id, "w1", "Go?", claim=task.claim,
                              attachments=[NewAttachment("a.txt", b"hello")])
    assert (await queue.task_get(task.id)).status is Status.RUNNING
    assert await value(queue, "SELECT count(*) FROM approvals") == 0
    assert [e.kind for e in (await queue.task_detail(task.id)).events] == ["enqueued", "claimed"]


async def test_a_refused_call_writes_no_event(queue: TaskQueue) -> None:
    task_id = await enqueue(queue)
    await queue.task_claim(CAP, "w1")
    before = await value(queue, "SELECT count(*) FROM task_events")
    with pytest.raises(Exception, match="lease lost"):
        await queue.task_complete(task_id, "w2")
    assert await value(queue, "SELECT count(*) FROM task_events") == before


async def test_task_events_are_append_only(queue: TaskQueue) -> None:
    await claimed(queue)
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        await sql(queue, "UPDATE task_events SET kind = 'forged'")
    assert await value(queue, "SELECT kind FROM task_events") == "claimed"


async def test_a_tasks_enqueued_event_is_append_only_too(queue: TaskQueue) -> None:
    task_id = await enqueue(queue, actor="scheduler")
    for change in ("enqueued_by = 'forged'", "enqueued_by = NULL",
                   "enqueued_event_id = enqueued_event_id + 1"):
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            await sql(queue, f"UPDATE tasks SET {change} WHERE id = %s", task_id)
    # The task's other columns still change, through the API and by hand.
    task = await queue.task_claim(CAP, "w1")
    assert task is not None and task.id == task_id
    await sql(queue, "UPDATE tasks SET priority = 5 WHERE id = %s", task_id)
    [event] = (await queue.task_detail(task_id)).events[:1]
    assert (event.kind, event.actor) == ("enqueued", "scheduler")


async def test_the_enqueued_event_is_the_tasks_row_and_reads_as_before(
        queue: TaskQueue) -> None:
    first = await queue.task_enqueue(CAP, {"n": 1}, actor="scheduler", dedupe_key="job-7")
    batch = await queue.task_enqueue_many(CAP, [NewTask({"n": 2}), NewTask({"n": 3})])
    assert await value(queue, "SELECT count(*) FROM task_events") == 0
    task = await queue.task_claim(CAP, "w1")
    assert task is not None and task.id == first.id
    row = (await sql(queue, "SELECT created_at, enqueued_event_id FROM tasks WHERE id = %s",
                     first.id))[0]

    events = (await queue.task_detail(first.id)).events
    assert [(e.kind, e.actor) for e in events] == [("enqueued", "scheduler"), ("claimed", "w1")]
    enqueued, claim = events
    assert (enqueued.id, enqueued.task_id, enqueued.at) == (
        row["enqueued_event_id"], first.id, row["created_at"])
    assert enqueued.detail == {"to": "pending", "dedupe_key": "job-7"}
    assert enqueued.id < claim.id
    for e in batch:
        [only] = (await queue.task_detail(e.id)).events
        assert (only.kind, only.actor, only.detail) == (
            "enqueued", None, {"to": "pending", "dedupe_key": None})
    ids = [r["id"] for r in await sql(queue, "SELECT id FROM task_history ORDER BY id")]
    assert len(ids) == len(set(ids)) == 4


async def test_a_task_enqueued_before_the_change_reads_its_enqueued_event_once(
        queue: TaskQueue) -> None:
    # What the enqueue wrote before migration 0012: the task, and its event as a row.
    [row] = await sql(queue, """
        WITH t AS (INSERT INTO tasks (capability) VALUES (%s) RETURNING id)
        INSERT INTO task_events (task_id, kind, actor, detail)
        SELECT id, 'enqueued', 'old-producer', '{"to": "pending", "dedupe_key": null}'
        FROM t RETURNING task_id""", CAP)
    task = await queue.task_claim(CAP, "w1")
    assert task is not None and task.id == row["task_id"]

    events = (await queue.task_detail(task.id)).events
    assert [(e.kind, e.actor) for e in events] == [("enqueued", "old-producer"),
                                                   ("claimed", "w1")]


async def test_event_insert_appends_a_note_that_is_not_a_transition(queue: TaskQueue) -> None:
    task_id = await enqueue(queue)
    event = await queue.event_insert(task_id, "telegram_sent", actor="bot",
                                     detail={"chat": 1})
    assert (event.kind, event.actor, event.detail) == ("telegram_sent", "bot", {"chat": 1})
    assert (await queue.task_detail(task_id)).events[-1] == event
