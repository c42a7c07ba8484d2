"""Round trips of the pipelined transactions. A decision (issue 26, goal 6): its
transaction, whose start is the decision's time and which a resume waits for, costs two
round trips to the server, not one per statement; an approve's vote goes out with the
locks, before the checks that may refuse it, which then roll it back. A batch enqueue with
dedupe keys: two. Counted on the wire by a TCP proxy between the queue and PostgreSQL;
each outcome is checked beside its count, and a failure inside a pipeline takes
everything back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from taskqueue import (
    AlreadyApproved,
    AlreadyDecided,
    ApprovalExpired,
    Decision,
    NewAttachment,
    NewTask,
    NotAnApprover,
    Status,
    TaskQueue,
)

from ..factories import CAP, PNG, backdate, parked, sql, value

# BEGIN with the approval's and the task's locks, the capability's read and (an approve)
# the vote with the count of votes; the decision, its event, its NOTIFYs, the approval's
# reads and COMMIT; then the pipeline's closing sync, after the commit. Each statement on
# its own (psycopg's transaction block, unpipelined) was 14 for an approve, 11 for a skip.
DECIDE_ROUND_TRIPS = 3
# An approve short of the count (four-eyes): the locks with the vote, then the progress
# with COMMIT and the closing sync (the requester's own: 11 statement by statement, then 6
# while the votes were read again and the progress awaited statement by statement).
PARTIAL_ROUND_TRIPS = 2
# BEGIN, the keys' locks and the batch; COMMIT with the closing sync (psycopg's transaction
# block: five).
DEDUPE_ENQUEUE_ROUND_TRIPS = 2


class TurnCounter:
    """A proxy to PostgreSQL that counts the turns of the conversation: each time the
    server answers after the client spoke is one round trip, however the bytes were cut
    into packets."""

    def __init__(self) -> None:
        self.turns = 0
        self._client_spoke = False

    async def pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   from_client: bool) -> None:
        try:
            while data := await reader.read(65536):
                if from_client:
                    self._client_spoke = True
                elif self._client_spoke:
                    self._client_spoke = False
                    self.turns += 1
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


@asynccontextmanager
async def counted_queue(dsn: str) -> AsyncIterator[tuple[TaskQueue, TurnCounter]]:
    """A one-connection TaskQueue whose every byte passes a TurnCounter."""
    target = conninfo_to_dict(dsn)
    counter = TurnCounter()

    async def serve(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        s_reader, s_writer = await asyncio.open_connection(
            str(target.get("host") or "127.0.0.1"), int(target.get("port") or 5432))
        with contextlib.suppress(asyncio.CancelledError):  # the test's loop ended first
            await asyncio.gather(counter.pipe(c_reader, s_writer, True),
                                 counter.pipe(s_reader, c_writer, False))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxied = make_conninfo(**(target | {"host": "127.0.0.1", "port": port}))
    async with server, TaskQueue.connect(proxied, min_size=1, max_size=1) as q:
        yield q, counter
    server.close()


async def test_an_approve_costs_three_round_trips_and_resumes_the_task(
        queue: TaskQueue, dsn: str) -> None:
    task, approval = await parked(queue, attachments=[NewAttachment("form.png", PNG)])
    async with counted_queue(dsn) as (q, counter):
        await q.task_get(task.id)  # the pool's connection is open and warm
        counter.turns = 0
        decided = await q.approval_decide(approval.id, Decision.APPROVED, "alice")
        assert counter.turns == DECIDE_ROUND_TRIPS
    assert decided.decision == "approved" and decided.decided_by == "alice"
    assert [a.filename for a in decided.attachments] == ["form.png"]
    assert [v.by for v in decided.approvals] == ["alice"]
    assert (await queue.task_get(task.id)).status is Status.APPROVED


async def test_deciding_by_task_costs_the_same_and_a_skip_ends_the_task(
        queue: TaskQueue, dsn: str) -> None:
    task, _ = await parked(queue)
    async with counted_queue(dsn) as (q, counter):
        await q.task_get(task.id)
        counter.turns = 0
        decided = await q.approval_decide_for_task(task.id, Decision.SKIPPED, "bob")
        assert counter.turns == DECIDE_ROUND_TRIPS
    assert decided.decision == "skipped"
    assert (await queue.task_get(task.id)).status is Status.SKIPPED


async def test_an_approve_short_of_the_count_stays_open_through_the_pipeline(
        queue: TaskQueue, dsn: str) -> None:
    task, approval = await parked(queue, required_approvals=2,
                                  request={"requested_by": "carol"})
    async with counted_queue(dsn) as (q, counter):
        await q.task_get(task.id)
        counter.turns = 0
        own = await q.approval_decide(approval.id, Decision.APPROVED, "carol")
        # The locks with the vote; the progress, its event and COMMIT with the closing
        # sync. The requester's uncounting goes out with them, not on its own.
        assert counter.turns == PARTIAL_ROUND_TRIPS
        counter.turns = 0
        first = await q.approval_decide(approval.id, Decision.APPROVED, "alice")
        assert counter.turns == PARTIAL_ROUND_TRIPS
        assert first.is_open and first.approved_count == 1
        second = await q.approval_decide(approval.id, Decision.APPROVED, "bob")
    assert own.is_open and own.approved_count == 0
    assert second.decision == "approved" and second.approved_count == 2
    assert (await queue.task_get(task.id)).status is Status.APPROVED
    assert task.capability == CAP
    votes = await sql(queue, "SELECT person, counts FROM approval_votes ORDER BY person")
    assert votes == [{"person": "alice", "counts": True}, {"person": "bob", "counts": True},
                     {"person": "carol", "counts": False}]
    assert await value(queue, "SELECT count(*) FROM notifications "
                              "WHERE kind = 'approval_progress'") == 2


async def test_a_failure_inside_the_pipeline_records_nothing_and_the_connection_lives_on(
        queue: TaskQueue, dsn: str) -> None:
    """A statement the server refuses mid-pipeline (here the task's update, by a trigger)
    takes the whole decision back, and the queue's one connection serves the next call."""
    task, approval = await parked(queue)
    await sql(queue, """CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
                        $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$""")
    await sql(queue, "CREATE TRIGGER refuse BEFORE UPDATE ON tasks FOR EACH ROW "
                     "EXECUTE FUNCTION refuse()")
    async with counted_queue(dsn) as (q, _):
        with pytest.raises(psycopg.errors.RaiseException, match="refused by the test"):
            await q.approval_decide(approval.id, Decision.APPROVED, "alice")
        assert (await q.task_get(task.id)).status is Status.NEEDS_APPROVAL
        assert await value(queue, "SELECT count(*) FROM approval_votes") == 0
        assert await value(queue, "SELECT decision FROM approvals") is None
        await sql(queue, "DROP TRIGGER refuse ON tasks")
        decided = await q.approval_decide(approval.id, Decision.APPROVED, "alice")
        with pytest.raises(AlreadyDecided):  # refused in Python: rolled back, still usable
            await q.approval_decide(approval.id, Decision.SKIPPED, "bob")
        assert (await q.task_get(task.id)).status is Status.APPROVED
    assert decided.decision == "approved"
    events = [e.kind for e in (await queue.task_detail(task.id)).events]
    assert events.count("decided") == 1


async def test_a_batch_with_dedupe_keys_costs_two_round_trips_and_still_dedupes(
        queue: TaskQueue, dsn: str) -> None:
    items = [NewTask({"i": i}, dedupe_key=f"k{i % 3}") for i in range(5)]
    async with counted_queue(dsn) as (q, counter):
        await q.task_list()
        counter.turns = 0
        found = await q.task_enqueue_many(CAP, items)
        assert counter.turns == DEDUPE_ENQUEUE_ROUND_TRIPS
    assert [f.created for f in found] == [True, True, True, False, False]
    assert found[3].id == found[0].id and found[4].id == found[1].id
    assert await value(queue, "SELECT count(*) FROM tasks") == 3


async def test_a_vote_sent_before_the_checks_is_kept_only_when_they_pass(
        queue: TaskQueue, dsn: str) -> None:
    """The approve's vote goes out with the locks: a refused approve (not an approver), an
    approve of an expired question and a second approve by one person leave no vote of
    theirs; the requester's own approve is kept but not counted."""
    await queue.capability_set(CAP, approvers=["alice", "bob", "carol"], required_approvals=2)
    task, approval = await parked(queue, request={"requested_by": " Carol "})
    async with counted_queue(dsn) as (q, _):
        with pytest.raises(NotAnApprover):
            await q.approval_decide(approval.id, Decision.APPROVED, "mallory")
        assert await value(queue, "SELECT count(*) FROM approval_votes") == 0
        own = await q.approval_decide_for_task(task.id, Decision.APPROVED, "carol")
        assert own.is_open and own.approved_count == 0
        assert [(v.by, v.counted) for v in own.approvals] == [("carol", False)]
        first = await q.approval_decide(approval.id, Decision.APPROVED, "alice")
        assert first.is_open and first.approved_count == 1
        with pytest.raises(AlreadyApproved):
            await q.approval_decide(approval.id, Decision.APPROVED, "alice")
        assert await value(queue, "SELECT count(*) FROM approval_votes") == 2
        await backdate(queue, "approvals", "expires_at", "1 s", "id = %s", approval.id)
        with pytest.raises(ApprovalExpired):
            await q.approval_decide(approval.id, Decision.APPROVED, "bob")
    assert await value(queue, "SELECT count(*) FROM approval_votes WHERE person = 'bob'") == 0
    assert (await queue.task_get(task.id)).status is Status.EXPIRED
