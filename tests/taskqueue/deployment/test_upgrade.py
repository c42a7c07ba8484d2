"""An upgrade as a user makes it: a database made and used by the release before four-eyes
(tests/taskqueue/deployment/releases/), migrated by this one, with the old and the new client
side by side. The database refuses the old client's approvals (it records no approves), reads
still work, and every task finishes once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from taskqueue import Decision, Reaper, Status, TaskQueue, migrate

from ..factories import sync_rows

RELEASE = Path(__file__).parent / "releases" / "signoff-fa22f10.tar.gz"

# What the old release does to its database: 30 tasks, 6 parked, 2 of them approved, 5
# finished, one held by a worker that died.
OLD_USE = """
import asyncio, json, os
from taskqueue import Decision, TaskQueue, migrate

async def main():
    dsn = os.environ["DATABASE_URL"]
    await migrate(dsn)
    async with TaskQueue.connect(dsn) as q:
        ids = [(await q.task_enqueue("demo", {"n": i})).id for i in range(30)]
        parked = []
        for i in range(6):
            t = await q.task_claim("demo", "old-w")
            await q.task_park(t.id, "old-w", f"Go {i}?", claim=t.claim)
            parked.append(t.id)
        for task_id in parked[:2]:
            await q.approval_decide_for_task(task_id, Decision.APPROVED, "alice")
        for _ in range(5):
            t = await q.task_claim("demo", "old-w")
            await q.task_complete(t.id, "old-w", claim=t.claim)
        dead = await q.task_claim("demo", "dead-w", lease=1)
    print(json.dumps({"ids": ids, "parked": parked, "dead": dead.id}))

asyncio.run(main())
"""


@pytest.fixture
def old_release(tmp_path: Path) -> Path:
    """The old release's package, unpacked."""
    folder = tmp_path / "old"
    with tarfile.open(RELEASE) as tar:
        tar.extractall(folder, filter="data")
    return folder


def run_old(folder: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The old client, first on the path (it shadows the installed package)."""
    env = os.environ | {"DATABASE_URL": dsn, "PYTHONPATH": str(folder)}
    env.pop("SIGNOFF_MIGRATIONS_DIR", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=folder, timeout=120, check=False)


def statuses(dsn: str) -> dict[int, str]:
    return {r["id"]: r["status"] for r in sync_rows(dsn, "SELECT id, status FROM tasks")}


@pytest.mark.slow
async def test_an_old_database_upgrades_and_the_old_client_cannot_approve_alone(
        old_release: Path, empty_dsn: str) -> None:
    dsn = empty_dsn
    made = run_old(old_release, dsn, "-c", OLD_USE)
    assert made.returncode == 0, made.stderr
    old = json.loads(made.stdout)
    where = run_old(old_release, dsn, "-c", "import taskqueue; print(taskqueue.__file__)")
    assert where.stdout.startswith(str(old_release))
    before = statuses(dsn)
    assert sorted(before.values()).count("needs_approval") == 4
    assert [r["version"] for r in sync_rows(dsn, "SELECT version FROM schema_migrations")
            ] == ["0001", "0003", "0004", "0005", "0006"]

    applied = await migrate(dsn)
    assert applied[0] == "0007" and "0020" in applied
    assert statuses(dsn) == before  # every row kept

    async with TaskQueue.connect(dsn) as new:
        assert new.schema_newer is None
        fresh = (await new.task_enqueue("fresh", {"n": 1})).id
        held = await new.task_claim("fresh", "new-w")
        assert held is not None
        await new.task_park(fresh, "new-w", "Two people?", claim=held.claim,
                            required_approvals=2)

        # The old CLI approves by itself: the database refuses, nothing moves.
        for task_id, required in ((fresh, 2), (old["parked"][2], 1)):
            refused = run_old(old_release, dsn, "-m", "taskqueue", "approve", str(task_id),
                              "--by", "alice")
            assert refused.returncode == 1
            # (Its other lines are the new workloads' CLI plugins, which it cannot load.)
            line = refused.stderr.splitlines()[-1]
            assert line.startswith("signoff: database error: approval ")
            assert line.endswith(f"cannot be approved with 0 of {required} required approves")
            assert (await new.task_get(task_id)).status is Status.NEEDS_APPROVAL
        assert sync_rows(dsn, "SELECT count(*) AS n FROM approval_votes "
                              "WHERE person = 'alice'") == [{"n": 2}]  # the old approves
        # The old client still reads.
        for args in (("ls", "--json"), ("show", str(fresh), "--json")):
            read = run_old(old_release, dsn, "-m", "taskqueue", *args)
            assert read.returncode == 0, read.stderr

        # The new client finishes everything, each task once.
        await new.approval_decide_for_task(fresh, Decision.APPROVED, "alice")
        await new.approval_decide_for_task(fresh, Decision.APPROVED, "bob")
        for task_id in old["parked"][2:]:
            await new.approval_decide_for_task(task_id, Decision.APPROVED, "carol")
        sync_rows(dsn, "UPDATE tasks SET lease_expires_at = now() - interval '1 minute' "
                       "WHERE id = %s", old["dead"])
        assert (await Reaper(new).run_once()).task_ids == (old["dead"],)
        for capability in ("demo", "fresh"):
            while (task := await new.task_claim(capability, "new-w")) is not None:
                await new.task_complete(task.id, "new-w", claim=task.claim)
        assert set(statuses(dsn).values()) == {"succeeded"}
        done = sync_rows(dsn, "SELECT task_id, count(*) AS n FROM task_events "
                              "WHERE kind = 'completed' GROUP BY task_id")
        assert len(done) == 31 and {r["n"] for r in done} == {1}
        [total] = [s for s in await new.decision_stats() if s.scope == "total"]
        assert (total.requests, total.approved) == (7, 7)  # the old decisions counted too
