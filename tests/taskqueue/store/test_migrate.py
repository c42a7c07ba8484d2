"""Migrations: applied in order once each, checksummed, and safe to run from several processes."""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from taskqueue import MigrationError, Status, TaskQueue
from taskqueue.store.migrate import discover, migrate, migrations_dir

from ..factories import sync_rows

TABLES = {"tasks", "approvals", "approval_attachments", "task_events", "capabilities",
          "reaper_runs", "schema_migrations"}
TASK_COLUMNS = {"id", "capability", "status", "priority", "payload", "state", "result",
                "last_error", "attempts", "max_attempts", "run_after", "dedupe_key", "worker",
                "lease_expires_at", "created_at", "updated_at", "first_claimed_at"}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of migrations/ that a test may edit."""
    copy = tmp_path / "migrations"
    shutil.copytree(migrations_dir(), copy)
    return copy


def _tables(dsn: str) -> set[str]:
    found = sync_rows(dsn, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {r["tablename"] for r in found}


async def test_migrate_applies_every_file_and_gives_the_schema(empty_dsn: str) -> None:
    assert await migrate(empty_dsn) == [m.version for m in discover()]
    assert _tables(empty_dsn) >= TABLES
    columns = sync_rows(empty_dsn, "SELECT column_name FROM information_schema.columns "
                                   "WHERE table_name = 'tasks'")
    assert {r["column_name"] for r in columns} >= TASK_COLUMNS
    recorded = sync_rows(empty_dsn, "SELECT version, checksum FROM schema_migrations")
    assert {(r["version"], r["checksum"]) for r in recorded} == {
        (m.version, m.checksum) for m in discover()}


async def test_migrate_allows_exactly_the_nine_statuses(empty_dsn: str) -> None:
    await migrate(empty_dsn)
    for status in Status:
        sync_rows(empty_dsn, "INSERT INTO tasks (capability, status) VALUES ('c', %s)", status)
    with pytest.raises(psycopg.errors.CheckViolation):
        sync_rows(empty_dsn, "INSERT INTO tasks (capability, status) VALUES ('c', 'done')")


async def test_migrate_creates_partial_indexes_on_the_claimable_states(empty_dsn: str) -> None:
    await migrate(empty_dsn)
    [row] = sync_rows(empty_dsn, "SELECT indexdef FROM pg_indexes "
                                 "WHERE indexname = 'tasks_claimable_idx'")
    assert "WHERE" in row["indexdef"] and "pending" in row["indexdef"]
    assert "approved" in row["indexdef"] and "succeeded" not in row["indexdef"]


async def test_migrate_has_autovacuum_keep_up_with_the_high_churn_tables(
        empty_dsn: str) -> None:
    await migrate(empty_dsn)
    found = sync_rows(empty_dsn, "SELECT relname, reloptions FROM pg_class "
                                 "WHERE relkind = 'r' AND reloptions IS NOT NULL "
                                 "AND relnamespace = current_schema()::regnamespace")
    options = {r["relname"]: dict(o.split("=") for o in r["reloptions"]) for r in found}
    assert set(options) == {"tasks", "task_events", "approvals", "notifications",
                            "notification_deliveries"}
    for table in options.values():
        assert table["autovacuum_vacuum_scale_factor"] == "0.01"
        assert table["autovacuum_vacuum_cost_delay"] == "0"
    assert options["task_events"]["autovacuum_vacuum_insert_scale_factor"] == "0.01"


async def test_migrate_a_second_time_applies_nothing(empty_dsn: str) -> None:
    await migrate(empty_dsn)
    assert await migrate(empty_dsn) == []
    assert len(sync_rows(empty_dsn, "SELECT * FROM schema_migrations")) == len(discover())


async def test_migrate_applies_only_a_new_file(empty_dsn: str, folder: Path) -> None:
    await migrate(empty_dsn, folder)
    (folder / "9999_extra.sql").write_text("CREATE TABLE extra (id int);")
    assert await migrate(empty_dsn, folder) == ["9999"]
    assert "extra" in _tables(empty_dsn)


async def test_migrate_refuses_an_applied_file_that_was_edited(empty_dsn: str,
                                                              folder: Path) -> None:
    await migrate(empty_dsn, folder)
    path = folder / "0001_initial.sql"
    path.write_text(path.read_text() + "\n-- edited\n")
    (folder / "9999_extra.sql").write_text("CREATE TABLE extra (id int);")
    with pytest.raises(MigrationError, match=r"0001_initial\.sql.*edited"):
        await migrate(empty_dsn, folder)
    assert "extra" not in _tables(empty_dsn)


async def test_migrate_refuses_a_database_ahead_of_the_folder(empty_dsn: str,
                                                             folder: Path) -> None:
    (folder / "9999_extra.sql").write_text("CREATE TABLE extra (id int);")
    await migrate(empty_dsn, folder)
    (folder / "9999_extra.sql").unlink()
    with pytest.raises(MigrationError, match="9999_extra"):
        await migrate(empty_dsn, folder)


async def test_migrate_rolls_back_a_failing_file_and_names_it(empty_dsn: str,
                                                             folder: Path) -> None:
    (folder / "9999_broken.sql").write_text("CREATE TABLE half (id int);\nSELECT 1/0;")
    with pytest.raises(MigrationError, match=r"9999_broken\.sql"):
        await migrate(empty_dsn, folder)
    assert "half" not in _tables(empty_dsn)
    versions = {r["version"] for r in sync_rows(empty_dsn, "SELECT * FROM schema_migrations")}
    assert versions == {m.version for m in discover()}


def test_discover_refuses_a_misnamed_file(folder: Path) -> None:
    (folder / "2_extra.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match=r"2_extra\.sql"):
        discover(folder)


def test_discover_refuses_two_files_with_one_version(folder: Path) -> None:
    (folder / "0001_again.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="version"):
        discover(folder)


def test_discover_refuses_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(MigrationError, match="no migrations folder"):
        discover(tmp_path / "nowhere")


def test_concurrent_migrations_apply_each_file_once(empty_dsn: str) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: asyncio.run(migrate(empty_dsn)), range(4)))
    applied = [r for r in results if r]
    assert applied == [[m.version for m in discover()]]
    assert results.count([]) == 3
    assert _tables(empty_dsn) >= TABLES
    assert len(sync_rows(empty_dsn, "SELECT * FROM schema_migrations")) == len(discover())


async def test_each_schema_on_the_search_path_holds_a_queue_of_its_own(empty_dsn: str) -> None:
    sync_rows(empty_dsn, "CREATE SCHEMA team_a; CREATE SCHEMA team_b")
    dsns = {name: psycopg.conninfo.make_conninfo(empty_dsn, options=f"-csearch_path={name}")
            for name in ("team_a", "team_b")}
    for dsn in dsns.values():
        assert await migrate(dsn) == [m.version for m in discover()]
    async with TaskQueue.connect(dsns["team_a"]) as a, TaskQueue.connect(dsns["team_b"]) as b:
        await a.task_enqueue("demo", {"team": "a"})
        assert await b.task_claim("demo", "w") is None
        task = await a.task_claim("demo", "w")
        assert task is not None and task.payload == {"team": "a"}
    assert _tables(empty_dsn) == set()
    found = sync_rows(empty_dsn, "SELECT DISTINCT schemaname FROM pg_tables "
                                 "WHERE tablename = 'tasks'")
    assert {r["schemaname"] for r in found} == {"team_a", "team_b"}
