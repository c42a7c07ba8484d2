"""Signoff through a real PgBouncer in transaction mode, in both modes: with SIGNOFF_DIRECT_URL
(LISTEN and the locks on the server itself) and without (polling, a lease row, transaction
locks). Claim, park, decide and resume; a worker drain; the leader; `signoff migrate`."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from taskqueue import Decision, Leadership, Status, TaskQueue, migrate
from taskqueue.runtime.leadership import LeaseLeadership
from taskqueue.store import pooler
from taskqueue.store.migrate import discover
from tests.conftest import ADMIN_DSN
from tests.pgbouncer import Bouncer, pgbouncer
from tests.taskqueue import handlers_for_tests as h

from ..factories import CAP, sync_rows
from ..worker_helpers import ROOT, run_of, running_pool, wait_for, wait_status

pytestmark = pytest.mark.slow

MODES = ["direct", "polling"]


@pytest.fixture(scope="module")
def bouncer() -> Iterator[Bouncer]:
    with pgbouncer(ADMIN_DSN) as b:
        yield b


@pytest.fixture(params=MODES)
def pooled(request: pytest.FixtureRequest, bouncer: Bouncer, dsn: str,
           monkeypatch: pytest.MonkeyPatch) -> str:
    """This test's database through PgBouncer; in "direct" mode SIGNOFF_DIRECT_URL names the
    server itself, in "polling" mode it is unset."""
    monkeypatch.delenv(pooler.POOLER_ENV, raising=False)
    if request.param == "direct":
        monkeypatch.setenv(pooler.DIRECT_ENV, dsn)
    else:
        monkeypatch.delenv(pooler.DIRECT_ENV, raising=False)
    return bouncer.dsn_for(dsn)


@pytest.fixture
async def through(pooled: str) -> AsyncIterator[TaskQueue]:
    async with TaskQueue.connect(pooled, min_size=2, max_size=8) as q:
        yield q


def _direct() -> bool:
    return bool(os.environ.get(pooler.DIRECT_ENV))


async def test_the_pooler_is_detected_and_prepared_statements_are_off(
        through: TaskQueue, pooled: str, dsn: str) -> None:
    assert pooler.behind_pooler(pooled) and not pooler.behind_pooler(dsn)
    async with through.pool.connection() as conn:
        assert conn.prepare_threshold is None
    assert pooler.session_dsn(pooled) == (dsn if _direct() else None)


async def test_claim_park_decide_resume_many_times_through_the_pooler(
        through: TaskQueue) -> None:
    """Each statement runs far past psycopg's prepare threshold (5), on 8 client connections
    sharing the pooler's server connections: a prepared statement would break at once."""
    ids = [(await through.task_enqueue(CAP, {"n": n})).id for n in range(12)]

    async def worker(n: int) -> None:
        # A worker's loop: a new task is parked and approved, an approved one completed. Which
        # task a claim returns is the claim's business (SKIP LOCKED passes a row another
        # claimer holds a moment), so a worker takes whatever comes, as a real one does.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            task = await through.task_claim(CAP, f"w{n}")
            if task is None:
                if all([(await through.task_get(i)).status is Status.SUCCEEDED for i in ids]):
                    return
                await asyncio.sleep(0.05)
            elif task.decision is Decision.APPROVED:
                await through.task_complete(task.id, f"w{n}", claim=task.claim,
                                            result={"n": task.payload["n"]})
            else:
                await through.task_save_state(task.id, f"w{n}", {"n": n}, claim=task.claim)
                await through.task_park(task.id, f"w{n}", "Go?", claim=task.claim,
                                        request={"n": task.payload["n"]})
                await through.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
        raise AssertionError("the tasks did not all finish within 120 s")

    await asyncio.gather(*(worker(n) for n in range(12)))
    for n, task_id in enumerate(ids):
        detail = await through.task_detail(task_id)
        assert detail.task.status is Status.SUCCEEDED and detail.task.result == {"n": n}
        assert [a.decision for a in detail.approvals] == [Decision.APPROVED]  # parked once
        assert [e.kind for e in detail.events].count("completed") == 1


async def test_a_worker_drains_and_an_approve_resumes_through_the_pooler(
        through: TaskQueue, caplog: pytest.LogCaptureFixture) -> None:
    """With the direct URL an approve wakes the worker by NOTIFY (the poll is 60 s, so only
    NOTIFY can resume it in time); without it, the worker polls."""
    caplog.set_level(logging.INFO, logger="signoff")
    poll = 60.0 if _direct() else 0.5
    ids = [(await through.task_enqueue("mail", {"n": n})).id for n in range(20)]
    asked = (await through.task_enqueue("ask", {})).id
    async with running_pool(through, run_of(h.quick, "mail"), run_of(h.asks, "ask"),
                            concurrency=4, poll_interval=poll) as pool:
        if _direct():
            await wait_for(lambda: _listening(pool))
        await wait_status(through, asked, Status.NEEDS_APPROVAL)
        for task_id in ids:
            await wait_status(through, task_id, Status.SUCCEEDED)
        if _direct():  # what was enqueued after the pool listened wakes it, too
            late = (await through.task_enqueue("mail", {"n": 99})).id
            await wait_status(through, late, Status.SUCCEEDED, timeout=10)
        started = time.monotonic()
        await through.approval_decide_for_task(asked, Decision.APPROVED, "alice")
        await wait_status(through, asked, Status.SUCCEEDED)
        resumed = time.monotonic() - started
    print(f"approve -> resume through PgBouncer ({'direct' if _direct() else 'polling'}): "
          f"{resumed:.3f} s")
    assert resumed < (2.0 if _direct() else 5.0)
    said = [r.getMessage() for r in caplog.records if r.name == "signoff.pooler"]
    assert len(said) <= 1  # said once per process (an earlier test may have said it)


async def _listening(pool: object) -> bool:
    listener = getattr(pool, "listener", None)
    return bool(listener is not None and listener.connected.is_set())


async def test_one_leader_of_two_and_a_takeover_through_the_pooler(
        through: TaskQueue, pooled: str) -> None:
    a = Leadership.for_database(pooled, name="a")
    b = Leadership.for_database(pooled, name="b")
    assert isinstance(a, LeaseLeadership) is not _direct()
    a.start()
    await asyncio.wait_for(a.decided.wait(), 15)
    b.start()
    await asyncio.wait_for(b.decided.wait(), 15)
    try:
        assert (a.is_leader, b.is_leader) == (True, False)
        await asyncio.sleep(2.5)  # renewals and tries go on: still exactly one
        assert (a.is_leader, b.is_leader) == (True, False)
        started = time.monotonic()
        await a.stop()
        await wait_for(lambda: _leads(b), timeout=10)
        assert time.monotonic() - started < 3
    finally:
        await a.stop()
        await b.stop()


async def _leads(leadership: Leadership) -> bool:
    return leadership.is_leader


@pytest.fixture
def empty_pooled(bouncer: Bouncer, empty_dsn: str, request: pytest.FixtureRequest,
                 monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv(pooler.DIRECT_ENV, raising=False)
    return bouncer.dsn_for(empty_dsn)


@pytest.mark.parametrize("mode", MODES)
async def test_migrations_from_three_processes_through_the_pooler_apply_each_once(
        empty_pooled: str, empty_dsn: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "direct":
        monkeypatch.setenv(pooler.DIRECT_ENV, empty_dsn)

    def run() -> list[str]:
        return asyncio.run(migrate(empty_pooled))

    with ThreadPoolExecutor(3) as ex:
        results = list(ex.map(lambda _: run(), range(3)))
    applied = sorted(v for r in results for v in r)
    assert applied == sorted(m.version for m in discover())
    rows = sync_rows(empty_dsn, "SELECT count(*) AS n FROM schema_migrations")
    assert rows == [{"n": len(discover())}]


@pytest.mark.parametrize("mode", MODES)
def test_signoff_migrate_through_the_pooler(empty_pooled: str, empty_dsn: str,
                                            mode: str) -> None:
    env = os.environ | {"DATABASE_URL": empty_pooled}
    env.pop(pooler.DIRECT_ENV, None)
    if mode == "direct":
        env[pooler.DIRECT_ENV] = empty_dsn
    done = subprocess.run([sys.executable, "-m", "taskqueue", "migrate", "--json"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    again = subprocess.run([sys.executable, "-m", "taskqueue", "migrate"], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.stdout == "up to date\n", again.stderr
    with psycopg.connect(empty_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (0,)


async def test_a_part_on_one_connection_through_the_pooler(pooled: str, dsn: str) -> None:
    """`connect_single` (what a `signoff` command runs on) detects the pooler on its one
    connection and prepares nothing: each statement runs far past the prepare threshold."""
    from taskqueue import PeopleQueue

    async with TaskQueue.connect_single(pooled) as q:
        ids = [(await q.task_enqueue(CAP, {"n": n})).id for n in range(8)]
        async with q.pool.connection() as conn:
            assert conn.prepare_threshold is None
    async with PeopleQueue.connect_single(pooled) as people:
        for _ in range(12):
            assert {t.id for t in await people.task_list(capability=CAP)} == set(ids)
            assert (await people.task_detail(ids[0])).task.payload == {"n": 0}


def test_ls_show_and_approve_through_the_pooler(pooled: str, dsn: str) -> None:
    async def parked() -> int:
        async with TaskQueue.connect(dsn) as q:
            await q.task_enqueue(CAP, {"n": 1})
            task = await q.task_claim(CAP, "w")
            assert task is not None
            await q.task_park(task.id, "w", "Go?", claim=task.claim)
            return task.id

    task_id = asyncio.run(parked())
    env = os.environ | {"DATABASE_URL": pooled}
    for argv in (["ls", "--json"], ["show", str(task_id)],
                 ["approve", str(task_id), "--by", "alice"]):
        done = subprocess.run([sys.executable, "-m", "taskqueue", *argv], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    assert sync_rows(dsn, "SELECT status FROM tasks WHERE id = %s", task_id) == [
        {"status": "approved"}]
