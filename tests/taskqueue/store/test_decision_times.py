"""Migration 0031: the time to decide on the rows it belongs to. An approval's
decide_seconds is computed by the server; a vote carries its own time from the request and
the request's capability; an approve whose decider has no vote of their own is marked. Each
stays true through the API and through hand edits, and a database that had decisions before
gets them filled in."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from taskqueue import Decision, TaskQueue
from taskqueue.store.migrate import migrate

from ..factories import migrations_before, parked, sql, sync_rows

_VOTES = """
SELECT v.person, v.capability, v.seconds,
       EXTRACT(EPOCH FROM v.decided_at - a.created_at)::float8 AS expected
FROM approval_votes v JOIN approvals a ON a.id = v.approval_id ORDER BY v.person"""


async def _mark(queue: TaskQueue, approval_id: int) -> bool:
    [row] = await sql(queue, "SELECT decided_without_vote AS m FROM approvals WHERE id = %s",
                      approval_id)
    return bool(row["m"])


async def test_a_vote_carries_its_time_and_capability(queue: TaskQueue) -> None:
    await queue.capability_set("deploy", required_approvals=2)
    _, approval = await parked(queue, "deploy")
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    await queue.approval_decide(approval.id, Decision.APPROVED, "Bob")
    votes = await sql(queue, _VOTES)
    assert [(v["person"], v["capability"]) for v in votes] == [("Bob", "deploy"),
                                                               ("alice", "deploy")]
    assert all(v["seconds"] == v["expected"] >= 0 for v in votes)
    [a] = await sql(queue, "SELECT decide_seconds, EXTRACT(EPOCH FROM decided_at - created_at)"
                           "::float8 AS expected, decided_without_vote FROM approvals")
    assert a["decide_seconds"] == a["expected"] >= 0 and not a["decided_without_vote"]


async def test_hand_edits_of_either_time_are_followed(queue: TaskQueue) -> None:
    _, approval = await parked(queue, "deploy")
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    await sql(queue, "UPDATE approvals SET created_at = created_at - interval '1 hour'")
    [vote] = await sql(queue, _VOTES)
    assert vote["seconds"] == vote["expected"] >= 3600
    await sql(queue, "UPDATE approval_votes SET decided_at = decided_at + interval '1 minute'")
    [vote] = await sql(queue, _VOTES)
    assert vote["seconds"] == vote["expected"] >= 3660
    [a] = await sql(queue, "SELECT decide_seconds FROM approvals")
    assert a["decide_seconds"] >= 3600
    await sql(queue, "UPDATE approvals SET capability = 'vm'")
    [moved] = await sql(queue, _VOTES)
    assert (moved["capability"], moved["seconds"]) == ("vm", vote["seconds"])
    vote = moved
    # An edit that names neither time leaves the copy alone.
    await sql(queue, "UPDATE approval_votes SET counts = false")
    [again] = await sql(queue, _VOTES)
    assert again == vote


async def test_an_approve_without_its_deciders_vote_is_marked(queue: TaskQueue) -> None:
    _, approved = await parked(queue, "deploy")
    _, revised = await parked(queue, "deploy")
    await queue.approval_decide(approved.id, Decision.APPROVED, "alice")
    await queue.approval_decide(revised.id, Decision.REVISED, "bob", note="again")
    assert not await _mark(queue, approved.id) and not await _mark(queue, revised.id)
    # The decider's vote removed by hand: the approve is the decider's own again.
    await sql(queue, "DELETE FROM approval_votes WHERE approval_id = %s", approved.id)
    assert await _mark(queue, approved.id)
    await sql(queue, "INSERT INTO approval_votes (approval_id, person) VALUES (%s, ' ALICE')",
              approved.id)
    assert not await _mark(queue, approved.id)
    # Another decider named by hand, then that person's vote moved onto it.
    await sql(queue, "UPDATE approvals SET decided_by = 'frank' WHERE id = %s", approved.id)
    assert await _mark(queue, approved.id)
    await sql(queue, "INSERT INTO approval_votes (approval_id, person) VALUES (%s, 'frank')",
              revised.id)
    await sql(queue, "UPDATE approval_votes SET approval_id = %s "
                     "WHERE approval_id = %s AND person = 'frank'", approved.id, revised.id)
    assert not await _mark(queue, approved.id)
    # A revise and a skip are never marked, whoever voted.
    assert not await _mark(queue, revised.id)


async def test_a_decided_approval_is_pruned_with_its_votes(queue: TaskQueue) -> None:
    _, approval = await parked(queue, "deploy")
    _, other = await parked(queue, "deploy")
    await queue.approval_decide(approval.id, Decision.SKIPPED, "alice")
    await queue.approval_decide(other.id, Decision.APPROVED, "alice")
    await sql(queue, "DELETE FROM approvals WHERE id = %s", other.id)
    assert await sql(queue, "SELECT approval_id FROM approval_votes") == []
    assert [r["id"] for r in await sql(queue, "SELECT id FROM approvals")] == [approval.id]


@pytest.fixture
def before_0031(tmp_path: Path) -> Path:
    """The migrations as a release before 0031 shipped them."""
    return migrations_before(tmp_path, "0031")


async def test_the_decisions_made_before_the_migration_get_their_times(
        empty_dsn: str, before_0031: Path) -> None:
    await migrate(empty_dsn, before_0031)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        for n, (person, decider) in enumerate((("alice", "Alice"), ("bob", "carol"))):
            conn.execute("""
                WITH t AS (INSERT INTO tasks (capability, status) VALUES (%s, 'succeeded')
                           RETURNING id),
                     a AS (INSERT INTO approvals (task_id, question, created_at, expires_at)
                           SELECT id, 'Go?', now() - interval '1 hour',
                                  now() + interval '1 day' FROM t RETURNING id)
                INSERT INTO approval_votes (approval_id, person, decided_at)
                SELECT id, %s, now() - interval '10 minutes' FROM a""",
                         (("mail", "vm")[n], person))
            conn.execute("UPDATE approvals SET decision = 'approved', decided_by = %s, "
                         "decided_at = now() - interval '5 minutes' WHERE decision IS NULL",
                         (decider,))
    assert await migrate(empty_dsn) == ["0031"]
    votes = sync_rows(empty_dsn, _VOTES)
    assert [(v["person"], v["capability"], round(v["seconds"])) for v in votes] == [
        ("alice", "mail", 3000), ("bob", "vm", 3000)]
    decided = sync_rows(empty_dsn, "SELECT decided_by, round(decide_seconds) AS s, "
                                   "decided_without_vote AS m FROM approvals ORDER BY id")
    # carol decided an approve with bob's vote only: hers is an approve without a vote.
    assert [(r["decided_by"], r["s"], r["m"]) for r in decided] == [
        ("Alice", 3300, False), ("carol", 3300, True)]


async def test_a_name_whose_two_folds_differ_is_one_approve(queue: TaskQueue) -> None:
    # casefold gives the vote's key `strasse`, lower(btrim()) the report's `straße`: the
    # decider's own vote is found by either, so the report counts the approve once.
    _, approval = await parked(queue, "deploy")
    await queue.approval_decide(approval.id, Decision.APPROVED, "Straße")
    [vote] = await sql(queue, "SELECT person_key FROM approval_votes")
    assert vote["person_key"] == "strasse" and not await _mark(queue, approval.id)
    people = [r for r in await queue.decision_stats() if r.scope == "person"]
    assert [(r.person, r.approved) for r in people] == [("Straße", 1)]
