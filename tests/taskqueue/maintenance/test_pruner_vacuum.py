"""The pruner's VACUUM: past `vacuum_after` deleted rows it vacuums the tables its deletes
reached, never below it or at 0, deletes the same rows either way, keeps going when
PostgreSQL skips a table, and never holds up the claims running beside it."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from taskqueue import Completion, NewTask, Pruner, PrunerConfig, TaskQueue
from taskqueue.store.services import PRUNED_TABLES
from tests.conftest import ADMIN_DSN

from ..cli_helpers import Cli
from ..factories import CAP, approved_and_done, claimed, sql, sync_rows, value

LIVE = "live"


async def _old(queue: TaskQueue, n: int, capability: str = "old") -> None:
    """`n` tasks that finished 40 days ago, each with two events."""
    await sql(queue, "INSERT INTO tasks (capability, status, finished_at) SELECT %s, "
                     "'succeeded', now() - interval '40 days' FROM generate_series(1, %s)",
              capability, n)
    await sql(queue, "INSERT INTO task_events (task_id, kind) SELECT id, k FROM tasks, "
                     "unnest(ARRAY['claimed', 'completed']) k WHERE capability = %s", capability)


async def _vacuums(queue: TaskQueue) -> dict[str, int]:
    """Each pruned table's count of manual VACUUMs (autovacuum's are counted apart)."""
    found = await sql(queue, "SELECT relname, vacuum_count FROM pg_stat_user_tables "
                             "WHERE relname = ANY(%s)", list(PRUNED_TABLES))
    return {r["relname"]: int(r["vacuum_count"]) for r in found}


async def test_a_prune_past_vacuum_after_vacuums_every_table_its_deletes_reached(
        queue: TaskQueue) -> None:
    await _old(queue, 3)
    before = await _vacuums(queue)
    report = await Pruner(queue, PrunerConfig(vacuum_after=3)).run_once()
    after = await _vacuums(queue)
    assert report.tasks == 3 and report.vacuumed == PRUNED_TABLES
    assert report.vacuum_ms is not None and report.vacuum_ms >= 0
    assert all(after[t] == before[t] + 1 for t in PRUNED_TABLES), (before, after)
    assert report.to_json()["vacuumed"] == list(PRUNED_TABLES)
    assert report.summary() == f"tasks=3 attachments=0 vacuumed=8 vacuum_ms={report.vacuum_ms}"


@pytest.mark.parametrize(("old", "vacuum_after"), [(2, 3), (5, 0)],
                         ids=["below-the-threshold", "zero-never"])
async def test_a_prune_below_vacuum_after_or_with_zero_does_not_vacuum(
        queue: TaskQueue, old: int, vacuum_after: int) -> None:
    await _old(queue, old)
    before = await _vacuums(queue)
    report = await Pruner(queue, PrunerConfig(vacuum_after=vacuum_after)).run_once()
    assert (report.tasks, report.vacuumed, report.vacuum_ms) == (old, (), None)
    assert await _vacuums(queue) == before
    assert report.to_json()["vacuumed"] == [] and report.to_json()["vacuum_ms"] is None
    assert await value(queue, "SELECT count(*) FROM tasks") == 0


@pytest.mark.parametrize("vacuum_after", [0, 1], ids=["no-vacuum", "vacuum"])
async def test_a_vacuuming_prune_deletes_and_keeps_the_same_rows(
        queue: TaskQueue, vacuum_after: int) -> None:
    gone = await _completed(queue, 40)
    kept = await _completed(queue, 10)
    audit = await _approved(queue)
    pending = (await queue.task_enqueue(CAP, {"n": 1})).id
    for task_id in (gone, kept, None):
        await queue.notification_send("Subject", f"about {task_id}", task_id=task_id)
    report = await Pruner(queue, PrunerConfig(vacuum_after=vacuum_after)).run_once()
    assert (report.tasks, report.attachments) == (1, 1)
    assert bool(report.vacuumed) is bool(vacuum_after)
    assert {r["id"] for r in await sql(queue, "SELECT id FROM tasks")} == {kept, audit, pending}
    assert {r["task_id"] for r in await sql(queue, "SELECT task_id FROM task_history")} == {
        kept, audit, pending}
    assert [r["task_id"] for r in await sql(queue, "SELECT task_id FROM notifications "
                                                   "WHERE kind = 'message' ORDER BY id")] == [
        kept, None]
    assert await value(queue, "SELECT count(*) FROM approvals") == 1
    assert await value(queue, "SELECT count(*) FROM approval_attachments") == 0


async def _completed(queue: TaskQueue, days: int) -> int:
    task = await claimed(queue)
    await queue.task_complete(task.id, "w1", claim=task.claim)
    await _backdate(queue, task.id, days)
    return task.id


async def _approved(queue: TaskQueue) -> int:
    """A task that asked a person, was approved and finished 40 days ago: the audit trail
    keeps it and loses its attachment."""
    task_id = await approved_and_done(queue)
    await _backdate(queue, task_id, 40)
    return task_id


async def _backdate(queue: TaskQueue, task_id: int, days: int) -> None:
    await sql(queue, "UPDATE tasks SET finished_at = now() - make_interval(days => %s) "
                     "WHERE id = %s", days, task_id)


# -- a VACUUM PostgreSQL refuses ------------------------------------------------------

SECRET = "s3cret-pruner-pw"


@pytest.fixture
def not_owner(dsn: str) -> Iterator[tuple[str, str]]:
    """A role that may read and delete the queue's rows but owns none of its tables (so
    PostgreSQL skips its VACUUM with a WARNING), and its DSN with a password (trust
    authentication ignores it; the logs must not show it). Dropped afterwards."""
    role = f"signoff_t_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
    sync_rows(dsn, f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public "
                   f"TO {role}")
    info = psycopg.conninfo.conninfo_to_dict(dsn) | {"user": role, "password": SECRET}
    try:
        yield role, psycopg.conninfo.make_conninfo(**info)
    finally:
        sync_rows(dsn, f"DROP OWNED BY {role}")
        with psycopg.connect(ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f"DROP ROLE {role}")


async def test_a_vacuum_postgresql_skips_is_one_warning_and_the_prune_still_reports(
        not_owner: tuple[str, str], dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    _, role_dsn = not_owner
    sync_rows(dsn, "INSERT INTO tasks (capability, status, finished_at) SELECT 'old', "
                   "'succeeded', now() - interval '40 days' FROM generate_series(1, 4)")
    caplog.set_level(logging.INFO, "signoff.pruner")
    async with TaskQueue.connect(role_dsn) as queue:
        report = await Pruner(queue, PrunerConfig(vacuum_after=1)).run_once()
    assert (report.tasks, report.vacuumed) == (4, ()) and report.vacuum_ms is not None
    assert sync_rows(dsn, "SELECT count(*) AS n FROM tasks") == [{"n": 0}]
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    line = warning.getMessage()
    assert line.startswith(f"pruner vacuum skipped tables={','.join(PRUNED_TABLES)} reason=")
    assert '"tasks"' in line and "\n" not in line and SECRET not in caplog.text
    assert "vacuumed=0" in caplog.text


async def test_a_table_whose_vacuum_fails_is_skipped_and_the_others_are_vacuumed(
        dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    """A transaction holds the lock VACUUM needs on `task_events`; with a lock_timeout of
    a second PostgreSQL cancels that table's VACUUM with an error, and only that one."""
    sync_rows(dsn, "INSERT INTO tasks (capability, status, finished_at) SELECT 'old', "
                   "'succeeded', now() - interval '40 days' FROM generate_series(1, 4)")
    impatient = psycopg.conninfo.make_conninfo(dsn, options="-c lock_timeout=1000")
    caplog.set_level(logging.WARNING, "signoff.pruner")
    async with (await psycopg.AsyncConnection.connect(dsn) as holder,
                TaskQueue.connect(impatient) as queue):
        await holder.execute("LOCK TABLE task_events IN SHARE UPDATE EXCLUSIVE MODE")
        report = await Pruner(queue, PrunerConfig(vacuum_after=4)).run_once()
    assert report.tasks == 4
    assert report.vacuumed == tuple(t for t in PRUNED_TABLES if t != "task_events")
    [warning] = caplog.records
    assert warning.getMessage() == ("pruner vacuum skipped tables=task_events "
                                    "reason=canceling statement due to lock timeout")


# -- beside the claimers ----------------------------------------------------------------

async def test_a_vacuuming_prune_neither_waits_for_claimers_nor_holds_them_up(
        queue: TaskQueue, dsn: str) -> None:
    """A transaction holds the lock VACUUM takes (SHARE UPDATE EXCLUSIVE) on `tasks`, so
    the prune's VACUUM stays in progress, waiting for it; claimers on another capability
    claim and complete half their tasks meanwhile, on connections of their own. Then the
    lock goes, and the rest run beside the VACUUM. Every task completes once."""
    await _old(queue, 500)
    live = [e.id for e in await queue.task_enqueue_many(LIVE, [NewTask({"n": i})
                                                               for i in range(200)])]
    done: list[int] = []
    half = asyncio.Event()
    async with await psycopg.AsyncConnection.connect(dsn) as holder:
        await holder.execute("LOCK TABLE tasks IN SHARE UPDATE EXCLUSIVE MODE")
        prune = asyncio.create_task(Pruner(queue, PrunerConfig(vacuum_after=500)).run_once())
        await _vacuum_waits(queue)
        claimers = [asyncio.create_task(_claimer(queue, f"w{i}", done, half))
                    for i in range(4)]
        await asyncio.wait_for(half.wait(), 60)
        assert not prune.done()
        await holder.rollback()
    report = await asyncio.wait_for(prune, 60)
    await asyncio.wait_for(asyncio.gather(*claimers), 60)
    assert report.tasks == 500 and report.vacuumed == PRUNED_TABLES
    assert sorted(done) == sorted(live)
    completed = await sql(queue, "SELECT task_id, count(*) AS n FROM task_events "
                                 "WHERE kind = 'completed' GROUP BY task_id")
    assert {r["task_id"]: r["n"] for r in completed} == dict.fromkeys(live, 1)
    assert await value(queue, "SELECT count(*) FROM tasks WHERE status <> 'succeeded'") == 0


async def _vacuum_waits(queue: TaskQueue) -> None:
    """Until the prune's VACUUM waits for a lock (its deletes went through)."""
    for _ in range(600):
        if await value(queue, "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                              "current_database() AND wait_event_type = 'Lock' "
                              "AND query LIKE '%VACUUM (ANALYZE) \"tasks\"'"):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the prune's VACUUM never waited for the held lock")


async def _claimer(queue: TaskQueue, worker: str, done: list[int], half: asyncio.Event
                   ) -> None:
    """Claim and complete LIVE tasks, five at a time, until none is left."""
    while tasks := await queue.task_claim_many(LIVE, worker, 5):
        await queue.task_complete_many([Completion(t.id, worker, t.claim) for t in tasks])
        done.extend(t.id for t in tasks)
        if len(done) >= 100:
            half.set()


# -- the command line -------------------------------------------------------------------

def test_signoff_prune_json_reports_its_vacuum(dsn: str, tmp_path: Path) -> None:
    sync_rows(dsn, "INSERT INTO tasks (capability, status, finished_at) VALUES "
                   "(%s, 'succeeded', now() - interval '40 days')", CAP)
    config = tmp_path / "signoff.toml"
    config.write_text("[retention]\nvacuum_after = 1\n")
    cli = Cli(dsn).fast
    report = cli.json("prune", "--config", str(config), "--json")
    assert (report["tasks"], report["vacuumed"]) == (1, list(PRUNED_TABLES))
    assert isinstance(report["vacuum_ms"], float)
    quiet = cli.json("prune", "--json")
    assert (quiet["tasks"], quiet["vacuumed"], quiet["vacuum_ms"]) == (0, [], None)
    sync_rows(dsn, "INSERT INTO tasks (capability, status, finished_at) VALUES "
                   "(%s, 'succeeded', now() - interval '40 days')", CAP)
    assert "; vacuumed 8 tables in " in cli.ok("prune", "--config", str(config))
