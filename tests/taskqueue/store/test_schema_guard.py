"""The database keeps the four-eyes rule itself (migration 0020), a client refuses to write to
a database a newer Signoff migrated, and a server below the supported floor is refused."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from taskqueue import Decision, SchemaTooNew, ServerTooOld, Status, TaskQueue
from taskqueue.store import db
from taskqueue.store.db import check_reachable
from taskqueue.store.schema_guard import known_version

from ..cli_helpers import ERROR, OK, Cli
from ..factories import CAP, claimed, enqueue, parked, sql, value

HANDLERS = "tests.taskqueue.handlers_for_tests"
FORCE = "UPDATE approvals SET decision = 'approved', decided_by = %s, decided_at = now() " \
        "WHERE id = %s"


async def test_a_hand_made_approve_without_the_approves_is_refused(queue: TaskQueue) -> None:
    task, approval = await parked(queue, required_approvals=2)
    with pytest.raises(psycopg.errors.CheckViolation, match="with 0 of 2 required approves"):
        await sql(queue, FORCE, "alice", approval.id)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    with pytest.raises(psycopg.errors.CheckViolation, match="with 1 of 2 required approves"):
        await sql(queue, FORCE, "alice", approval.id)
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL
    # The second person's approve, through the API, is what makes it approved.
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "bob")
    assert done.decision is Decision.APPROVED
    assert (await queue.task_get(task.id)).status is Status.APPROVED


async def test_the_requesters_own_approve_does_not_count_for_the_database(
        queue: TaskQueue) -> None:
    _, approval = await parked(queue, request={"requested_by": "alice"})
    await sql(queue, "INSERT INTO approval_votes (approval_id, person, counts) "
                     "VALUES (%s, 'alice', false)", approval.id)
    with pytest.raises(psycopg.errors.CheckViolation, match="with 0 of 1 required approves"):
        await sql(queue, FORCE, "alice", approval.id)
    await sql(queue, "INSERT INTO approval_votes (approval_id, person) VALUES (%s, 'bob')",
              approval.id)
    await sql(queue, FORCE, "bob", approval.id)  # one counted approve: allowed
    assert await value(queue, "SELECT decision FROM approvals WHERE id = %s",
                       approval.id) == "approved"


async def test_raising_required_of_an_approved_request_is_refused(queue: TaskQueue) -> None:
    _, approval = await parked(queue)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    with pytest.raises(psycopg.errors.CheckViolation, match="with 1 of 3 required approves"):
        await sql(queue, "UPDATE approvals SET required = 3 WHERE id = %s", approval.id)
    # Skips, revises and expiries are not approves: no approves needed.
    _, other = await parked(queue, "other", required_approvals=2)
    await sql(queue, "UPDATE approvals SET decision = 'skipped', decided_at = now() "
                     "WHERE id = %s", other.id)


async def _from_the_future(queue: TaskQueue) -> None:
    """The database as a newer Signoff leaves it: a core migration this client lacks."""
    await sql(queue, "INSERT INTO schema_migrations (version, name, checksum) "
                     "VALUES ('9999', 'from_the_future', 'x')")


async def test_a_database_migrated_by_a_newer_signoff_is_read_not_written(
        queue: TaskQueue, dsn: str) -> None:
    task, approval = await parked(queue)
    held = await claimed(queue)
    waiting = await enqueue(queue)
    await _from_the_future(queue)
    line = (f"this database was migrated by a newer Signoff (9999); this signoff knows up to "
            f"{known_version()}: upgrade it")
    async with TaskQueue.connect(dsn) as old:
        for call in (lambda: old.approval_decide(approval.id, Decision.APPROVED, "alice"),
                     lambda: old.approval_decide_for_task(task.id, Decision.SKIPPED, "alice"),
                     lambda: old.task_claim(CAP, "w9"),
                     lambda: old.task_park(held.id, "w1", "Go?", claim=held.claim)):
            with pytest.raises(SchemaTooNew) as refused:
                await call()
            assert str(refused.value) == line
        # Reads still work, and nothing was written.
        assert (await old.task_get(task.id)).status is Status.NEEDS_APPROVAL
        assert (await old.task_get(held.id)).status is Status.RUNNING
        assert (await old.task_get(waiting)).status is Status.PENDING
    assert await value(queue, "SELECT count(*) FROM approval_votes") == 0


async def test_the_cli_refuses_in_one_line_and_still_reads(queue: TaskQueue, dsn: str) -> None:
    task, _ = await parked(queue)
    await _from_the_future(queue)
    cli = Cli(dsn)
    refused = cli("approve", str(task.id), "--by", "alice")
    assert refused.returncode == ERROR
    assert refused.stderr == (
        "signoff: this database was migrated by a newer Signoff (9999); this signoff knows "
        f"up to {known_version()}: upgrade it\n")
    shown = cli("show", str(task.id), "--json")
    assert shown.returncode == OK, shown.stderr
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL


async def test_a_channels_own_newer_migration_is_not_the_cores(queue: TaskQueue,
                                                                dsn: str) -> None:
    await sql(queue, "INSERT INTO schema_migrations (version, name, checksum) "
                     "VALUES ('web/9999', 'from_the_future', 'x')")
    async with TaskQueue.connect(dsn) as fresh:
        assert fresh.schema_newer is None
        assert await fresh.task_claim(CAP, "w1") is None


async def test_a_server_below_the_floor_is_refused_in_one_line(
        dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with psycopg.connect(dsn) as conn:
        number = conn.info.server_version
    await check_reachable(dsn)  # this server is supported
    # Raise the floor past this server: the same check refuses it, naming both versions.
    monkeypatch.setattr(db, "MIN_SERVER_VERSION", number + 10000)
    with pytest.raises(ServerTooOld) as refused:
        await check_reachable(dsn)
    this, floor = db.version_text(number), (number + 10000) // 10000
    assert str(refused.value) == (
        f"the PostgreSQL server at {db.describe(dsn)} is version {this}; Signoff needs "
        f"PostgreSQL {floor} or newer")
    with pytest.raises(ServerTooOld):
        async with TaskQueue.connect(dsn):
            pass


def test_version_text_reads_as_people_write_it() -> None:
    assert db.version_text(150004) == "15.4"
    assert db.version_text(180004) == "18.4"
    assert db.version_text(90624) == "9.6"


async def test_a_worker_refuses_at_start_before_writing_its_caps(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    await enqueue(queue)
    await _from_the_future(queue)
    config = tmp_path / "c.toml"
    config.write_text(f"[capabilities.{CAP}]\nhandler = '{HANDLERS}:quick'\nmax_running = 1\n")
    refused = Cli(dsn)("worker", "--capability", CAP, "--config", str(config))
    assert refused.returncode == ERROR
    assert refused.stderr.splitlines()[-1].startswith(
        "signoff: this database was migrated by a newer Signoff (9999)")
    assert (await queue.capability_get(CAP)).max_running is None
    assert await value(queue, "SELECT count(*) FROM tasks WHERE status = 'pending'") == 1


@pytest.mark.parametrize("autocommit", [True, False])
async def test_the_schema_check_reads_the_newest_migration_either_way(
        dsn: str, empty_dsn: str, autocommit: bool) -> None:
    """On an autocommit connection (a pool's, a command's) the check is one statement; in a
    caller's transaction a missing table must not abort that transaction."""
    from taskqueue.store.schema_guard import newer_schema

    async with await psycopg.AsyncConnection.connect(empty_dsn, autocommit=autocommit) as conn:
        assert await newer_schema(conn) is None  # no migrations table yet
        assert await (await conn.execute("SELECT 7")).fetchone() == (7,)
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=autocommit) as conn:
        assert await newer_schema(conn) is None  # this client's own schema
        newer = f"{int(known_version()) + 1:04d}"
        await conn.execute("INSERT INTO schema_migrations (version, name, checksum) "
                           "VALUES (%s, 'from_the_future', '')", (newer,))
        assert await newer_schema(conn) == newer
