"""People are the one identity (issue 39): names compared case-folded everywhere, the
requester recorded at enqueue, the capability's required_approvals a floor, the merge
migration, and the CLI's `--by` against `[people.NAME]` with who typed it."""

from __future__ import annotations

import getpass
import shutil
import socket
from pathlib import Path

import pytest

from taskqueue import (
    AlreadyApproved,
    Decision,
    NotAnApprover,
    Status,
    TaskQueue,
)
from taskqueue.store.migrate import migrate, migrations_dir

from ..cli_helpers import Cli, last_id
from ..factories import CAP, claimed, in_threads, parked, sync_rows

ALREADY_APPROVED = 7


async def test_one_person_in_two_spellings_counts_once(queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2)
    first = await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert first.is_open and first.approved_count == 1
    for spelling in ("ALICE", " Alice "):
        with pytest.raises(AlreadyApproved, match="counts once"):
            await queue.approval_decide(approval.id, Decision.APPROVED, spelling)
    still = await queue.approval_get(approval.id)
    assert still.is_open and [v.by for v in still.approvals] == ["alice"]
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "bob")
    assert done.decision is Decision.APPROVED
    assert (await queue.task_get(task.id)).status is Status.APPROVED


def test_two_spellings_at_once_count_once(dsn: str) -> None:
    """Real concurrency: 'alice' and 'ALICE' approve the same two-of-two request from two
    threads at once; exactly one is recorded and the request stays open."""
    async def setup() -> int:
        async with TaskQueue.connect(dsn) as q:
            _, approval = await parked(q, required_approvals=2)
            return approval.id

    import asyncio
    approval_id = asyncio.run(setup())

    async def approve(q: TaskQueue, i: int) -> str:
        try:
            await q.approval_decide(approval_id, Decision.APPROVED, ("alice", "ALICE")[i])
        except AlreadyApproved:
            return "refused"
        return "recorded"

    outcomes = in_threads(2, dsn, approve)
    assert sorted(outcomes) == ["recorded", "refused"]
    votes = sync_rows(dsn, "SELECT person_key FROM approval_votes WHERE approval_id = %s",
                      approval_id)
    assert [v["person_key"] for v in votes] == ["alice"]
    [row] = sync_rows(dsn, "SELECT decision FROM approvals WHERE id = %s", approval_id)
    assert row["decision"] is None


async def test_approvers_and_escalation_names_compare_case_folded(queue: TaskQueue) -> None:
    cap = await queue.capability_set(CAP, approvers=["Alice", "bob"])
    assert cap.may_decide("ALICE") and cap.may_decide(" alice") and not cap.may_decide("carol")
    _, approval = await parked(queue)
    with pytest.raises(NotAnApprover):
        await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert done.decision is Decision.APPROVED and done.decided_by == "alice"


async def test_the_requester_is_recorded_at_enqueue_and_never_counts(queue: TaskQueue) -> None:
    task = await claimed(queue, actor="alice")
    assert task.requested_by == "alice" and task.to_json()["requested_by"] == "alice"
    # The park's request names someone else: it cannot take alice's place as requester.
    approval = await queue.task_park(task.id, "w1", "Go?", claim=task.claim,
                                     request={"requested_by": "bob"})
    own = await queue.approval_decide(approval.id, Decision.APPROVED, "ALICE")
    assert own.is_open and own.approved_count == 0
    named = await queue.approval_decide(approval.id, Decision.APPROVED, "bob")
    assert named.is_open and named.approved_count == 0  # requested_by still adds bob
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert done.decision is Decision.APPROVED
    assert [(v.by, v.counted) for v in done.approvals] == [
        ("ALICE", False), ("bob", False), ("carol", True)]


async def test_a_producer_is_the_requester_of_what_it_enqueues(queue: TaskQueue) -> None:
    task = await claimed(queue, actor="producer:nightly")
    assert task.requested_by == "producer:nightly"
    plain = await claimed(queue)
    assert plain.requested_by is None


async def test_the_requester_may_skip_their_own_request(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approvers=["bob"])
    task = await claimed(queue, actor="alice")
    approval = await queue.task_park(task.id, "w1", "Go?", claim=task.claim)
    with pytest.raises(NotAnApprover):  # not an approver: no approve, no revise
        await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    skipped = await queue.approval_decide(approval.id, Decision.SKIPPED, "Alice")
    assert skipped.decision is Decision.SKIPPED
    assert (await queue.task_get(task.id)).status is Status.SKIPPED
    [event] = [e for e in (await queue.task_detail(task.id)).events if e.kind == "decided"]
    assert event.detail["withdrawn"] is True
    # Anyone else who is not an approver still may not skip.
    other = await claimed(queue, actor="alice")
    again = await queue.task_park(other.id, "w1", "Go?", claim=other.claim)
    with pytest.raises(NotAnApprover):
        await queue.approval_decide(again.id, Decision.SKIPPED, "mallory")


async def test_required_approvals_is_a_floor_a_park_may_only_raise(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, required_approvals=2)
    _, lowered = await parked(queue, required_approvals=1)
    _, raised = await parked(queue, required_approvals=3)
    _, default = await parked(queue)
    assert (lowered.required, raised.required, default.required) == (2, 3, 2)
    one = await queue.approval_decide(lowered.id, Decision.APPROVED, "alice")
    assert one.is_open  # one approve never resumes what the operator set to two


async def test_the_migration_merges_approves_that_differ_only_in_case(
        empty_dsn: str, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    shutil.copytree(migrations_dir(), folder)
    later = tmp_path / "later"
    later.mkdir()
    for f in folder.glob("*.sql"):
        if int(f.name[:4]) >= 13:
            f.rename(later / f.name)
    await migrate(empty_dsn, folder)
    # The schema of 0012 (today's queries need 0013's columns): rows written with SQL.
    [task] = sync_rows(empty_dsn, "INSERT INTO tasks (capability, status) "
                                  "VALUES ('demo', 'needs_approval') RETURNING id")
    [approval] = sync_rows(
        empty_dsn, "INSERT INTO approvals (task_id, question, request, expires_at, required) "
                   "VALUES (%s, 'Go?', '{}', now() + interval '1 h', 3) RETURNING id",
        task["id"])
    sync_rows(empty_dsn, "INSERT INTO approval_votes (approval_id, person, decided_at) VALUES "
                         "(%s, 'alice', now() - interval '2 min'), "
                         "(%s, 'ALICE', now() - interval '1 min'), (%s, 'bob', now())",
              approval["id"], approval["id"], approval["id"])
    for f in later.glob("*.sql"):
        f.rename(folder / f.name)
    await migrate(empty_dsn, folder)
    async with TaskQueue.connect(empty_dsn) as queue:
        merged = await queue.approval_get(approval["id"])
        assert [v.by for v in merged.approvals] == ["alice", "bob"]
        with pytest.raises(AlreadyApproved):
            await queue.approval_decide(approval["id"], Decision.APPROVED, "Alice")


PEOPLE = """
[people.alice]
telegram_user_id = 1
[people.bob]
telegram_user_id = 2
"""


def test_cli_by_must_name_a_configured_person(dsn: str, tmp_path: Path) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text(PEOPLE)
    cli = Cli(dsn).fast
    task_id = last_id(cli.ok("enqueue", CAP, "--by", "Alice", "--config", str(config)))
    assert cli.show(task_id)["requested_by"] == "alice"  # the config's spelling
    cli.claim()
    cli.ok("park", str(task_id), "--worker", "w1", "--question", "Go?")
    refused = cli.fails(1, "enqueue", CAP, "--by", "mallory", "--config", str(config))
    assert "not a configured person" in refused
    assert [t["id"] for t in cli.json("ls", "--json")] == [task_id]  # nothing written
    err = cli.fails(1, "approve", str(task_id), "--by", "mallory", "--config", str(config))
    assert "not a configured person" in err
    assert cli.show(task_id)["approval"]["approvals"] == []  # nothing recorded
    own = cli.json("approve", str(task_id), "--by", "ALICE", "--config", str(config), "--json")
    assert own["decision"] is None  # alice asked for it: her approve does not count
    done = cli.json("approve", str(task_id), "--by", "BOB", "--config", str(config), "--json")
    typed = f"cli:{getpass.getuser()}@{socket.gethostname()}"
    assert done["decided_by"] == "bob" and done["decided_via"] == typed
    assert [(a["by"], a["counted"], a["via"], a["signed"]) for a in done["approvals"]] == [
        ("alice", False, typed, False), ("bob", True, typed, False)]


def test_cli_without_people_keeps_the_name_as_typed(dsn: str) -> None:
    cli = Cli(dsn).fast
    task_id = last_id(cli.ok("enqueue", CAP, "--by", "Zed"))
    assert cli.show(task_id)["requested_by"] == "Zed"
    cli.claim()
    cli.ok("park", str(task_id), "--worker", "w1", "--question", "Go?")
    assert cli.json("approve", str(task_id), "--by", "zed", "--json")["decision"] is None
    cli.fails(ALREADY_APPROVED, "approve", str(task_id), "--by", "ZED")
    done = cli.json("approve", str(task_id), "--by", "amy", "--json")
    assert done["decision"] == "approved" and done["decided_by"] == "amy"


SIGNATURE_REQUIRED = 8


def test_the_cli_cannot_sign_and_prints_the_web_address(dsn: str) -> None:
    cli = Cli(dsn)
    cli.fast.ok("caps", "set", CAP, "--signed-approvals", "on")
    task_id = cli.enqueue()
    cli.claim()
    approval_id = last_id(cli.fast.ok("park", str(task_id), "--worker", "w1",
                                      "--question", "Go?"))
    err = cli.fails(SIGNATURE_REQUIRED, "approve", str(task_id), "--by", "alice")
    assert "counts only passkey-signed approves" in err and "no web inbox" in err
    sync_rows(dsn, "INSERT INTO signing_links (name, url) VALUES "
                   "('web', 'http://localhost:8080/#approval-{approval_id}')")
    err = cli.fails(SIGNATURE_REQUIRED, "approve", str(task_id), "--by", "alice")
    assert f"http://localhost:8080/#approval-{approval_id}" in err
    shown = cli.show(task_id)
    assert shown["status"] == "needs_approval" and shown["approval"]["approvals"] == []
    # Skip and revise need no signature; off again, the approve counts.
    assert cli.fast.json("caps", "set", CAP, "--signed-approvals", "off",
                         "--json")["signed_approvals"] is False
    cli.fast.fails(2, "caps", "set", CAP, "--signed-approvals", "maybe")
    done = cli.fast.json("approve", str(task_id), "--by", "alice", "--json")
    assert done["decision"] == "approved"
    assert [a["signed"] for a in done["approvals"]] == [False]
