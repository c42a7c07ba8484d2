"""Migration 0029: an approval carries its task's capability (what the decision report and
the decision metrics group by, without reading a task per approval). Every way a question is
asked fills it from the task; a database that had questions before gets them filled in."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from taskqueue import TaskQueue
from taskqueue.store.migrate import migrate

from ..factories import migrations_before, parked, sql, sync_rows


async def test_a_park_and_an_ask_record_their_tasks_capability(queue: TaskQueue) -> None:
    await parked(queue, "mail")
    await queue.ask("deploy", "Ship it?", wait=0)
    rows = await sql(queue, "SELECT a.capability AS asked, t.capability AS task "
                            "FROM approvals a JOIN tasks t ON t.id = a.task_id ORDER BY a.id")
    assert [(r["asked"], r["task"]) for r in rows] == [("mail", "mail"), ("deploy", "deploy")]


async def test_an_insert_that_names_another_capability_gets_the_tasks(queue: TaskQueue) -> None:
    task, _ = await parked(queue, "mail")
    await sql(queue, "INSERT INTO approvals (task_id, question, expires_at, capability) "
                     "VALUES (%s, 'Again?', now() + interval '1 day', 'vm')", task.id)
    found = await sql(queue, "SELECT DISTINCT capability FROM approvals")
    assert found == [{"capability": "mail"}]


@pytest.fixture
def before_0029(tmp_path: Path) -> Path:
    """The migrations as a release before 0029 shipped them."""
    return migrations_before(tmp_path, "0029")


async def test_the_questions_asked_before_the_migration_get_their_capability(
        empty_dsn: str, before_0029: Path) -> None:
    await migrate(empty_dsn, before_0029)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        for cap in ("mail", "vm"):
            conn.execute(
                "WITH t AS (INSERT INTO tasks (capability, status) VALUES (%s, "
                "'needs_approval') RETURNING id) INSERT INTO approvals (task_id, question, "
                "expires_at) SELECT id, 'Go?', now() + interval '1 day' FROM t", (cap,))
    assert (await migrate(empty_dsn))[0] == "0029"
    rows = sync_rows(empty_dsn, "SELECT a.capability, t.capability AS task, "
                                "(SELECT is_nullable FROM information_schema.columns WHERE "
                                "table_name = 'approvals' AND column_name = 'capability') "
                                "AS nullable FROM approvals a JOIN tasks t ON t.id = a.task_id "
                                "ORDER BY a.id")
    assert [(r["capability"], r["task"], r["nullable"]) for r in rows] == [
        ("mail", "mail", "NO"), ("vm", "vm", "NO")]
