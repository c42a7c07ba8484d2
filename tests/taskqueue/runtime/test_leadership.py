"""Leadership: one of several contenders on a database leads; a release, a cut connection or a
dead leader hands the lock on; the leader steps down before anyone can take over."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import psycopg
import pytest

from taskqueue import LEADER_LOCK_KEY, Leadership
from taskqueue.runtime.leadership import RECONNECT_MAX, RECONNECT_MIN
from tests.conftest import ADMIN_DSN
from tests.taskqueue.worker_helpers import terminate_backends, wait_for


class Recorder:
    """A contender and the changes it was told, in order."""

    def __init__(self, dsn: str, name: str) -> None:
        self.changes: list[bool] = []
        self.leadership = Leadership(dsn, name=name, on_change=self._told)

    async def _told(self, leader: bool) -> None:
        self.changes.append(leader)


@pytest.fixture
async def pair(dsn: str) -> AsyncIterator[tuple[Recorder, Recorder]]:
    a, b = Recorder(dsn, "a"), Recorder(dsn, "b")
    a.leadership.start()
    b.leadership.start()
    yield a, b
    await a.leadership.stop()
    await b.leadership.stop()


def lock_holders(dsn: str) -> list[int]:
    """The backends of this test's database that hold the leader's advisory lock."""
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
            "WHERE l.locktype = 'advisory' AND l.granted AND d.datname = %s "
            "AND ((l.classid::bigint << 32) | l.objid::bigint) = %s",
            (name, LEADER_LOCK_KEY)).fetchall()
    return [int(r[0]) for r in rows]


def terminate(pid: int) -> None:
    """pg_terminate_backend one connection (a cut network, as the leader sees it)."""
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


async def _one_leads(a: Recorder, b: Recorder) -> bool:
    return a.leadership.is_leader != b.leadership.is_leader


def _roles(a: Recorder, b: Recorder) -> tuple[Recorder, Recorder]:
    return (a, b) if a.leadership.is_leader else (b, a)


async def test_exactly_one_of_two_contenders_leads_and_holds_the_lock(
        dsn: str, pair: tuple[Recorder, Recorder]) -> None:
    a, b = pair
    await wait_for(lambda: _one_leads(a, b))
    leader, standby = _roles(a, b)
    await asyncio.sleep(2.5)  # standbys have tried a few times meanwhile
    assert leader.changes == [True] and standby.changes == []
    assert len(lock_holders(dsn)) == 1
    assert (leader.leadership.role, standby.leadership.role) == ("leader", "standby")


async def test_a_release_hands_the_lock_on_at_once(
        dsn: str, pair: tuple[Recorder, Recorder]) -> None:
    a, b = pair
    await wait_for(lambda: _one_leads(a, b))
    leader, standby = _roles(a, b)
    began = time.monotonic()
    await leader.leadership.stop()
    assert leader.changes == [True, False]
    await wait_for(lambda: _async(standby.leadership.is_leader))
    # It wakes on the release's NOTIFY, else on its next one-second try.
    assert time.monotonic() - began < 2
    assert len(lock_holders(dsn)) == 1


async def test_a_cut_lock_connection_makes_the_leader_step_down_and_another_lead(
        dsn: str, pair: tuple[Recorder, Recorder]) -> None:
    a, b = pair
    await wait_for(lambda: _one_leads(a, b))
    leader, _ = _roles(a, b)
    [pid] = lock_holders(dsn)
    terminate(pid)
    await wait_for(lambda: _async(leader.changes[-1:] == [False] or
                                  len(leader.changes) > 2))
    await wait_for(lambda: _one_leads(a, b))
    assert len(lock_holders(dsn)) == 1
    assert lock_holders(dsn) != [pid]
    # Whoever leads now, the old leader was told it lost before it could lead again.
    assert leader.changes[:2] == [True, False]


async def test_a_contender_whose_database_is_gone_keeps_trying_and_leads_when_it_is_back(
        dsn: str) -> None:
    rec = Recorder(dsn.replace("dbname=", "dbname=nosuchdb_") if "dbname=" in dsn
                   else dsn.rsplit("/", 1)[0] + "/nosuchdb_leadership", "x")
    rec.leadership.start()
    try:
        await asyncio.sleep(1.5)
        assert rec.changes == [] and not rec.leadership.is_leader
    finally:
        await rec.leadership.stop()
    ok = Recorder(dsn, "y")
    ok.leadership.start()
    try:
        await wait_for(lambda: _async(ok.leadership.is_leader))
    finally:
        await ok.leadership.stop()
    assert ok.changes == [True, False]
    assert lock_holders(dsn) == []


async def test_contenders_cut_off_together_reconnect_after_different_waits_within_the_caps(
        dsn: str, pair: tuple[Recorder, Recorder]) -> None:
    a, b = pair
    await wait_for(lambda: _one_leads(a, b))
    both = (a.leadership, b.leadership)
    assert [x.connections for x in both] == [1, 1]
    assert terminate_backends(dsn) >= 2  # both lock connections at the same moment
    await wait_for(lambda: _async(all(x.connections >= 2 for x in both)))
    await wait_for(lambda: _one_leads(a, b))
    waits = [x.backoff.last for x in both]
    # Each drew its own wait from [0, RECONNECT_MIN] (the first retry's cap); a fixed
    # back-off would have had both wait exactly RECONNECT_MIN and come back together.
    assert all(w is not None and 0 <= w <= RECONNECT_MIN for w in waits), waits
    assert waits[0] != waits[1], waits
    assert all(x.backoff.attempt == 0 for x in both)  # reset by the successful reconnect
    # However long the database stays away, no wait passes RECONNECT_MAX.
    assert max(a.leadership.backoff.delay(n) for n in range(1, 40)) <= RECONNECT_MAX


async def test_stop_ends_a_contest_that_swallowed_its_first_cancel(
        dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # On Python 3.11, asyncio.wait_for returns its call's result instead of raising when the
    # cancel lands as the call completes (gh-86296): the leader's check did that at a stop
    # timed to its second, and the service then never exited on SIGTERM.
    swallowed: list[bool] = []

    async def contend() -> None:
        while True:
            try:
                await asyncio.sleep(3600)  # the check
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed.append(True)  # as wait_for's swallow: the loop runs on

    leadership = Leadership(dsn, name="a")
    monkeypatch.setattr(leadership, "_contend", contend)
    leadership.start()
    await asyncio.sleep(0)

    await asyncio.wait_for(leadership.stop(), 10)

    assert swallowed == [True]


async def _async(value: bool) -> bool:
    return value
