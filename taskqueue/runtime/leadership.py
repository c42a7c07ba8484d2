"""Leadership: which one of the processes on a database runs the once-only work, chosen by a
PostgreSQL advisory lock held on a connection of the process's own.

The lock is session-level: it goes when its connection does, so a killed leader (or one
whose connection was cut) frees it at once and a standby, which tries every `try_every`
seconds and wakes on the release's NOTIFY, takes over. The leader waits on its connection's
socket (so a connection the server ends is noticed at once) and checks it with a query every
`check_every` seconds (so a silent one is noticed within CHECK_TIMEOUT); on a loss it steps
down (`on_change(False)`, awaited) before it reconnects, so its leader-only work stops as
soon as it can know it lost the lock. A standby may still win the lock first: leader-only
work must tolerate a brief overlap (a channel's poller, say, must back off when its far side
refuses a second concurrent poll).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from taskqueue.errors import one_line
from taskqueue.runtime.backoff import Backoff
from taskqueue.store.pooler import session_dsn
from taskqueue.store.queries import query

log = logging.getLogger("signoff.leadership")

# The advisory lock's key (pg_locks: locktype advisory, classid 0, objid 0x516E0FF1,
# objsubid 1). Any number of processes may contend for it per database.
LEADER_LOCK_KEY = 0x516E0FF1
# Released leadership is announced on this channel, so standbys need not wait a full try.
LEADER_CHANNEL = "signoff_leader"
# A standby tries the lock this often; the leader checks its connection this often (s).
TRY_EVERY = 1.0
CHECK_EVERY = 1.0
# A check that takes longer counts as a lost connection (s).
CHECK_TIMEOUT = 5.0
# Backoff between reconnection attempts (s): full jitter under a cap that doubles from MIN
# up to MAX (runtime/backoff.py), so services cut off together do not reconnect together.
RECONNECT_MIN = 0.5
RECONNECT_MAX = 5.0
APPLICATION_NAME = "signoff-leader"
# A lease (LeaseLeadership) runs this long past its last renewal (s): longer than a renewal
# may take (CHECK_TIMEOUT after the try that follows the last success), so a leader whose
# renewals hang steps down before a standby can take its row; a dead leader's row is taken
# within LEASE_TTL + TRY_EVERY, inside the 10 s promise.
LEASE_TTL = 8.0
# stop() cancels the contest again after this long while it still runs (s).
CANCEL_AGAIN = 0.5

OnChange = Callable[[bool], Awaitable[None]]


class Leadership:
    """`await leadership.run()` until `await stop()`; `is_leader` says the current role and
    `on_change(is_leader)` is awaited on each change (one at a time, in order)."""

    def __init__(self, dsn: str, *, name: str = "", on_change: OnChange | None = None,
                 key: int = LEADER_LOCK_KEY, try_every: float = TRY_EVERY,
                 check_every: float = CHECK_EVERY) -> None:
        self.dsn, self.name, self.key = dsn, name, key
        self.on_change = on_change
        self.try_every, self.check_every = try_every, check_every
        self.is_leader = False
        self.elections = 0  # how often this process became the leader
        # Set once the first try has an answer (and a won lock's on_change has run).
        self.decided = asyncio.Event()
        self._conn: psycopg.AsyncConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self.backoff = Backoff(RECONNECT_MIN, RECONNECT_MAX)
        self.connections = 0  # how often it connected and listened (reconnects included)

    @classmethod
    def for_database(cls, dsn: str, **kwargs: Any) -> Leadership:
        """The leadership for `dsn`: the lock on `dsn`, or on SIGNOFF_DIRECT_URL when `dsn`
        goes through a transaction pooler, or a lease row when it does and there is no
        direct URL (store/pooler.py; detected when the queue connected)."""
        target = session_dsn(dsn)
        if target is None:
            return LeaseLeadership(dsn, **kwargs)
        return cls(target, **kwargs)

    @property
    def role(self) -> str:
        return "leader" if self.is_leader else "standby"

    def start(self) -> None:
        """Contend in the background (`run()` as a task)."""
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="signoff-leadership")

    async def run(self) -> None:
        while True:
            try:
                await self._contend()
            except (psycopg.Error, OSError, TimeoutError) as exc:
                why = one_line(exc) or type(exc).__name__
                await self._step_down(f"lost its database connection: {why}")
                delay = self.backoff.next()
                log.warning("leadership: no database connection (%s); trying again in %.1fs",
                            why, delay)
            except Exception:  # a bug must not end the contest for good
                await self._step_down("failed")
                delay = self.backoff.next()
                log.exception("leadership: failed; trying again in %.1fs", delay)
            await asyncio.sleep(delay)

    async def stop(self) -> None:
        """Step down (awaiting `on_change(False)` first), release the lock, stop contending."""
        # Taken first, so the cancelled contender leaves it open: the lock is kept until
        # the leader-only work has stopped.
        conn, self._conn = self._conn, None
        task, self._task = self._task, None
        if task is not None:
            await _cancelled(task)
        was_leader = self.is_leader
        await self._step_down("stopping")
        if conn is not None:
            if was_leader:
                with contextlib.suppress(psycopg.Error, OSError, TimeoutError):
                    async with asyncio.timeout(CHECK_TIMEOUT):
                        await self._release(conn)
                log.info("leadership: released name=%s", self.name)
            await conn.close()

    async def _release(self, conn: psycopg.AsyncConnection) -> None:
        await conn.execute(query("leader_release"), {"key": self.key, "channel": LEADER_CHANNEL})

    async def _contend(self) -> None:
        conn = await psycopg.AsyncConnection.connect(
            self.dsn, autocommit=True, connect_timeout=5, application_name=APPLICATION_NAME)
        self._conn = conn
        try:
            await conn.execute(query("leader_listen"))
            self.backoff.reset()
            self.connections += 1
            while True:
                if self.is_leader:
                    # Waiting on the socket, a connection the server ends is noticed at once.
                    await self._wait_for_release(conn)
                    async with asyncio.timeout(CHECK_TIMEOUT):
                        await conn.execute(query("leader_check"))
                elif await self._try(conn):
                    await self._change(True, "elected")
                    self.decided.set()
                else:
                    self.decided.set()
                    await self._wait_for_release(conn)
        finally:
            if self._conn is conn:
                self._conn = None
                await conn.close()

    async def _try(self, conn: psycopg.AsyncConnection) -> bool:
        async with asyncio.timeout(CHECK_TIMEOUT):
            cur = await conn.execute(query("leader_try_lock"), {"key": self.key})
        row = await cur.fetchone()
        return bool(row and row[0])

    async def _wait_for_release(self, conn: psycopg.AsyncConnection) -> None:
        """Wait `try_every` (a standby) or `check_every` (the leader) seconds on the
        connection; a standby wakes early when the leader announces its release."""
        wait = self.check_every if self.is_leader else self.try_every
        async for _ in conn.notifies(timeout=wait, stop_after=1):
            return

    async def _step_down(self, why: str) -> None:
        if self.is_leader:
            await self._change(False, why)

    async def _change(self, leader: bool, why: str) -> None:
        self.is_leader = leader
        if leader:
            self.elections += 1
        log.info("leadership: %s is now %s (%s)", self.name or "this process", self.role, why)
        if self.on_change is not None:
            try:
                await self.on_change(leader)
            except Exception:  # the role stands; the part that failed says why
                log.exception("leadership: a part failed to become %s", self.role)


class LeaseLeadership(Leadership):
    """Leadership as a lease row (leader_leases), for a database reached only through a
    transaction pooler, where a session lock does not hold: the leader renews its row every
    `check_every` seconds and leads while that succeeds; a standby takes the row when it is
    free (a clean stop deletes it) or lapsed (a dead leader: within `ttl` and a try)."""

    def __init__(self, dsn: str, *, ttl: float = LEASE_TTL, **kwargs: Any) -> None:
        super().__init__(dsn, **kwargs)
        self.ttl = ttl
        # Unique per process, so a restarted service with the same name is another holder.
        self.holder = f"{self.name or 'signoff'}:{secrets.token_hex(4)}"

    async def _contend(self) -> None:
        conn = await psycopg.AsyncConnection.connect(
            self.dsn, autocommit=True, connect_timeout=5, application_name=APPLICATION_NAME,
            prepare_threshold=None)
        self._conn = conn
        try:
            self.backoff.reset()
            self.connections += 1
            while True:
                held = await self._renew(conn)
                if held != self.is_leader:
                    await self._change(held, "elected (lease)" if held else "lease lost")
                self.decided.set()
                await asyncio.sleep(self.check_every if self.is_leader else self.try_every)
        finally:
            if self._conn is conn:
                self._conn = None
                await conn.close()

    async def _renew(self, conn: psycopg.AsyncConnection) -> bool:
        async with asyncio.timeout(CHECK_TIMEOUT):
            cur = await conn.execute(query("leader_lease_take"), {
                "key": self.key, "holder": self.holder, "ttl": self.ttl})
        return await cur.fetchone() is not None

    async def _release(self, conn: psycopg.AsyncConnection) -> None:
        await conn.execute(query("leader_lease_release"), {"key": self.key,
                                                           "holder": self.holder})


async def _cancelled(task: asyncio.Task[None]) -> None:
    """Cancel `task` and wait until it has ended, cancelling it again while it runs on.

    On Python 3.11, asyncio.wait_for swallows a cancel that lands in the loop turn in which
    the call it waits for completes (CPython gh-86296, fixed in 3.12): the leader's check is
    such a call, so one cancel could leave the contest running and stop() waiting for it,
    a service that never exits on SIGTERM."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_AGAIN)
    await asyncio.gather(task, return_exceptions=True)
