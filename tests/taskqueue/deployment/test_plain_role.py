"""Every migration and command as a plain role that owns its database (as on RDS, Cloud SQL and
Supabase): no superuser, no CREATEDB, no CREATEROLE, and no other role's backends to end."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from bot.service import migrate_channels
from taskqueue import Decision, Leadership, Pruner, PrunerConfig, Reaper, Status, TaskQueue, migrate
from tests.conftest import ADMIN_DSN
from tests.taskqueue import handlers_for_tests as h

from ..cli_helpers import Cli
from ..worker_helpers import run_of, running_pool, wait_status


@pytest.fixture
def plain_dsn() -> Iterator[str]:
    """A new role without any special right, and a new empty database it owns."""
    name = f"signoff_plain_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
                      "NOREPLICATION NOBYPASSRLS")
        admin.execute(f"CREATE DATABASE {name} OWNER {name}")
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_DSN)
    info.update(user=name, dbname=name)
    try:
        yield psycopg.conninfo.make_conninfo(**info)
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {name}")


async def test_migrations_and_the_queue_run_as_a_plain_role(plain_dsn: str) -> None:
    with psycopg.connect(plain_dsn) as conn:
        row = conn.execute("SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles "
                           "WHERE rolname = current_user").fetchone()
    assert row == (False, False, False)
    assert await migrate(plain_dsn)
    assert await migrate_channels(plain_dsn)
    async with TaskQueue.connect(plain_dsn, max_size=6) as queue:
        asked = (await queue.task_enqueue("ask", {})).id
        ids = [(await queue.task_enqueue("mail", {"n": n})).id for n in range(5)]
        async with running_pool(queue, run_of(h.quick, "mail"), run_of(h.asks, "ask"),
                                concurrency=2):
            await wait_status(queue, asked, Status.NEEDS_APPROVAL)
            await queue.approval_decide_for_task(asked, Decision.APPROVED, "alice")
            for task_id in [asked, *ids]:
                await wait_status(queue, task_id, Status.SUCCEEDED)
        await Reaper(queue).run_once()
        pruned = await Pruner(queue, PrunerConfig(days=0.0, vacuum_after=1)).run_once()
        assert pruned.tasks >= 5 and pruned.vacuumed  # VACUUM by the tables' owner
        await queue.metrics_read()
        leader = Leadership.for_database(plain_dsn, name="plain")
        leader.start()
        await asyncio.wait_for(leader.decided.wait(), 15)
        assert leader.is_leader
        await leader.stop()


def test_every_command_runs_as_a_plain_role(plain_dsn: str) -> None:
    cli = Cli(plain_dsn)
    cli.ok("migrate")
    task_id = cli.enqueue("demo")
    claimed = cli.claim("demo", "w1")
    assert claimed["id"] == task_id
    cli.ok("park", str(task_id), "--worker", "w1", "--question", "Go?")
    cli.ok("approve", str(task_id), "--by", "alice")
    again = cli.claim("demo", "w1")
    cli.ok("heartbeat", str(task_id), "--worker", "w1")
    cli.ok("complete", str(task_id), "--worker", "w1", "--claim", again["claim"])
    other = cli.enqueue("demo")
    cli.ok("cancel", str(other))
    cli.ok("retry", str(other))
    for args in (("reap",), ("signals",), ("ls",), ("show", str(task_id)), ("caps", "ls"),
                 ("stats", "demo"), ("prune", "--older-than", "0.5"),
                 ("caps", "set", "demo", "--max-running", "2")):
        cli.ok(*args)
