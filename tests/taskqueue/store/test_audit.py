"""The tamper-evident record (issue 39): the hash chain of decisions, approves and gated
actions, `signoff audit verify` finding edits in the chain or the live rows (also with
triggers off), removals and insertions, and `signoff audit`'s computed figures."""

from __future__ import annotations

import asyncio
import json

from taskqueue import Decision, Gate, GatedAction, TaskQueue, audit_verify
from taskqueue.maintenance.audit import record_hash

from ..cli_helpers import Cli
from ..factories import CAP, in_threads, parked, sql, sync_rows, untouched_update

AUDIT_MISMATCH = 9
SEND = {"kind": "send", "fingerprint": "msg-1"}


async def _acted(queue: TaskQueue, people: tuple[str, ...] = ("alice",)) -> int:
    """A task approved by `people` whose gated action ran; its approval's id."""
    task, approval = await parked(queue, request=SEND, required_approvals=len(people))
    for person in people:
        await queue.approval_decide(approval.id, Decision.APPROVED, person)
    held = await queue.task_claim(CAP, "w2")
    assert held is not None and held.id == task.id

    async def act(action: GatedAction) -> str:
        return "sent"

    await Gate(queue, held, "w2", "send").run("msg-1", act)
    await queue.task_complete(task.id, "w2", claim=held.claim)
    return approval.id


async def _history(queue: TaskQueue) -> int:
    """Two gated actions, a skip and a revise: the chain has every kind of record."""
    await _acted(queue, ("alice", "bob"))
    approval_id = await _acted(queue)
    _, skipped = await parked(queue)
    await queue.approval_decide(skipped.id, Decision.SKIPPED, "carol")
    _, revised = await parked(queue, required_approvals=2)
    await queue.approval_decide(revised.id, Decision.APPROVED, "alice")
    await queue.approval_decide(revised.id, Decision.REVISED, "bob", "shorter")
    return approval_id


async def test_a_whole_history_verifies(queue: TaskQueue) -> None:
    await _history(queue)
    report = await audit_verify(queue)
    assert report.ok, report.problems
    kinds = [r["kind"] for r in await sql(queue, "SELECT kind FROM audit_chain ORDER BY seq")]
    assert kinds.count("approve") == 4 and kinds.count("decision") == 4
    assert kinds.count("action_started") == 2 and kinds.count("action_finished") == 2
    assert report.records == len(kinds)
    chain = await sql(queue, "SELECT * FROM audit_chain ORDER BY seq")
    prev = "0" * 64
    for r in chain:  # each record: its content's hash with the previous record's
        assert r["prev_hash"] == prev
        assert r["hash"] == record_hash(prev, r["seq"], r["kind"], r["ref"], r["content"])
        prev = r["hash"]
    # Retention prunes a whole task with its approvals: that is no tampering.
    await sql(queue, "DELETE FROM tasks WHERE id = (SELECT min(task_id) FROM gated_actions)")
    assert (await audit_verify(queue)).ok


async def _problem(queue: TaskQueue) -> str:
    report = await audit_verify(queue)
    assert not report.ok
    return report.problems[0].line()


async def test_an_edited_decision_is_found_with_triggers_on_or_off(queue: TaskQueue) -> None:
    approval_id = await _history(queue)
    await sql(queue, "UPDATE approvals SET decided_by = 'mallory' WHERE id = %s", approval_id)
    line = await _problem(queue)
    assert f"approval:{approval_id}" in line and "'mallory' in the table" in line
    await sql(queue, "UPDATE approvals SET decided_by = 'alice' WHERE id = %s", approval_id)
    assert (await audit_verify(queue)).ok
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute("UPDATE approval_votes SET person = 'mallory' "
                           "WHERE approval_id = %s", (approval_id,))
    line = await _problem(queue)
    assert f"vote:{approval_id}:alice" in line and "mallory" in line


async def test_an_inserted_approve_with_triggers_off_is_found(queue: TaskQueue) -> None:
    _, approval = await parked(queue, required_approvals=2)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute("INSERT INTO approval_votes (approval_id, person, person_key) "
                           "VALUES (%s, 'bob', 'bob')", (approval.id,))
    line = await _problem(queue)
    assert f"vote:{approval.id}:bob" in line and "not in the chain" in line


async def test_a_removed_gated_action_is_found(queue: TaskQueue) -> None:
    approval_id = await _history(queue)
    await sql(queue, "DELETE FROM gated_actions WHERE approval_id = %s", approval_id)
    line = await _problem(queue)
    assert f"action:{approval_id}" in line and "removed" in line


async def test_a_changed_removed_or_inserted_record_is_named(queue: TaskQueue) -> None:
    await _history(queue)
    [mid] = await sql(queue, "SELECT * FROM audit_chain WHERE seq = 3")
    # Changed: its content no longer matches its hash.
    await sql(queue, "UPDATE audit_chain SET content = replace(content, '\"approval_id\": ', "
                     "'\"approval_id\": 9') WHERE seq = 3")
    assert (await _problem(queue)).startswith(f"record 3 ({mid['ref']}): was changed")
    await sql(queue, "UPDATE audit_chain SET content = %s WHERE seq = 3", mid["content"])
    assert (await audit_verify(queue)).ok
    # Removed: a gap.
    await sql(queue, "DELETE FROM audit_chain WHERE seq = 3")
    assert (await _problem(queue)).startswith("record 4 (")
    assert "records 3 to 3 before it were removed" in await _problem(queue)
    # Inserted out of order: the later records move up one and a made-up record takes the
    # place, its hash computed right; the record after it no longer follows it.
    [two] = await sql(queue, "SELECT hash FROM audit_chain WHERE seq = 2")
    content = json.dumps({"approval_id": 1, "person": "mallory"})
    await sql(queue, "INSERT INTO audit_chain (seq, kind, ref, content, prev_hash, hash) "
                     "VALUES (3, 'approve', 'vote:1:mallory', %s, %s, %s)",
              content, two["hash"], record_hash(two["hash"], 3, "approve", "vote:1:mallory",
                                                content))
    line = await _problem(queue)
    assert line.startswith("record 4 (") and "inserted out of order" in line


def test_concurrent_decisions_keep_one_chain(dsn: str) -> None:
    """Real concurrency: eight people decide eight requests at once; the chain stays one
    line with no gap and verifies."""
    async def setup() -> list[int]:
        async with TaskQueue.connect(dsn) as q:
            return [(await parked(q))[1].id for _ in range(8)]

    ids = asyncio.run(setup())

    async def decide(q: TaskQueue, i: int) -> None:
        await q.approval_decide(ids[i], Decision.APPROVED, f"p{i}")

    in_threads(8, dsn, decide)
    seqs = [r["seq"] for r in sync_rows(dsn, "SELECT seq FROM audit_chain ORDER BY seq")]
    assert seqs == list(range(1, 17))

    async def verify() -> bool:
        async with TaskQueue.connect(dsn) as q:
            return (await audit_verify(q)).ok

    assert asyncio.run(verify())


def test_the_cli_verifies_and_exits_nine_naming_the_record(dsn: str) -> None:
    cli = Cli(dsn)

    async def setup() -> int:
        async with TaskQueue.connect(dsn) as q:
            return await _history(q)

    approval_id = asyncio.run(setup())
    line = cli.ok("audit", "verify")
    assert line.startswith("audit verify: ") and "records checked, the chain is whole" in line
    doc = cli.fast.json("audit", "verify", "--json")
    assert doc["ok"] is True and doc["records"] > 10 and doc["problems"] == []
    sync_rows(dsn, "UPDATE approvals SET decided_by = 'mallory' WHERE id = %s", approval_id)
    err = cli.fails(AUDIT_MISMATCH, "audit", "verify")
    assert f"approval:{approval_id}" in err and "mallory" in err


def test_the_audit_figures_are_computed(dsn: str) -> None:
    cli = Cli(dsn).fast

    async def setup() -> int:
        async with TaskQueue.connect(dsn) as q:
            await _history(q)
            other = await q.task_enqueue("other", {})
            await q.event_insert(other.id, "stage", detail={"stage": "drafted"})
            # A gated action with no human decision behind it, forced with SQL.
            _, forced = await parked(q, "gated", request=SEND)
            # Past the database's own rule too (no counted approve: migration 0020).
            await untouched_update(q, "UPDATE approvals SET decision = 'approved', "
                                      "decided_by = 'x', decided_at = now() WHERE id = %s",
                                   forced.id)
            await sql(q, "UPDATE tasks SET status = 'approved' WHERE id = %s", forced.task_id)
            held = await q.task_claim("gated", "w3")
            assert held is not None
            await sql(q, "INSERT INTO gated_actions (approval_id, task_id, kind, fingerprint, "
                         "idempotency_key, approved_by, worker, claim_token, settled_by, "
                         "finished_at) VALUES (%s, %s, 'send', 'msg-1', gen_random_uuid(), "
                         "'x', 'w3', gen_random_uuid(), 'acted', now())",
                      forced.id, forced.task_id)
            _, old = await parked(q, "gated")
            await sql(q, "UPDATE approvals SET expires_at = now() - interval '1 s' "
                         "WHERE id = %s", old.id)
            from taskqueue import Reaper
            await Reaper(q).run_once()
            return forced.task_id

    forced_task = asyncio.run(setup())
    doc = cli.json("audit", "--json")
    assert set(doc) >= {"tasks", "gates_asked", "gated_actions",
                        "gated_actions_without_decision", "expired"}
    demo = doc["tasks"][CAP]
    assert (demo["tasks"], demo["claimed"], demo["asked"], demo["completed"]) == (4, 4, 4, 2)
    assert (demo["approved"], demo["skipped"]) == (2, 1)
    assert (doc["tasks"]["gated"]["tasks"], doc["tasks"]["gated"]["expired"]) == (2, 1)
    assert doc["tasks"]["other"]["tasks"] == 1 and doc["tasks"]["other"]["claimed"] == 0
    assert doc["tasks"]["other"]["stages"] == {"drafted": 1}
    assert doc["gates_asked"] == 6 and doc["expired"] == 1
    assert [(a["approved_by"], a["decided"]) for a in doc["gated_actions"]] == [
        (["alice", "bob"], True), (["alice"], True), ([], False)]
    assert doc["gated_actions_without_decision"] == 1
    assert doc["gated_actions"][2]["task_id"] == forced_task
    text = cli.ok("audit", "--since", "1")
    assert "7 tasks across 3 capabilities, 6 human-approval gates asked, 1 gated actions " \
           "without a human decision, 1 expired" in text
    assert "WITHOUT A HUMAN DECISION" in text
    cli.fails(1, "audit", "--since", "0")
