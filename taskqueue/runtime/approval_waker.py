"""Wakes whoever waits for a decision (the API's long-polls, `signoff ask --wait`) when an
approval changes: one subscription to the approvals' NOTIFY channel on the process's shared
listener, instead of each waiter reading the database four times a second."""

from __future__ import annotations

import asyncio
from typing import Any

from taskqueue.runtime.listener import ListenerHub, Subscription
from taskqueue.runtime.waits import wait_at_most
from taskqueue.store.base import APPROVALS_CHANNEL

# How long `listen()` waits for its LISTEN to hold before it lets the waiter read anyway
# (the wait then still reads again every second, as without a waker).
LISTEN_TIMEOUT = 5.0


class ApprovalWaker:
    """`await changed(seconds)` returns at the next change of any approval, or after
    `seconds`; it subscribes on first use (or at `listen()`) and `close()` ends the
    subscription. With no DSN (a pool whose conninfo is computed) it only sleeps a quarter
    of a second."""

    def __init__(self, dsn: str | None) -> None:
        self.dsn = dsn
        self._event = asyncio.Event()
        self._sub: Subscription | None = None

    @classmethod
    def for_pool(cls, pool: Any) -> ApprovalWaker:
        """The waker of a connection pool's database: none to listen on when the pool's
        conninfo is computed (a callable), so it only sleeps."""
        conninfo = pool.conninfo
        return cls(conninfo if isinstance(conninfo, str) else None)

    def _heard(self, channel: str, payload: str | None) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    def _subscribe(self) -> Subscription | None:
        if self.dsn is not None and self._sub is None:
            self._sub = ListenerHub.shared(self.dsn).subscribe([APPROVALS_CHANNEL],
                                                               self._heard)
        return self._sub

    async def listen(self, timeout: float = LISTEN_TIMEOUT) -> None:
        """Subscribe now and return once the LISTEN holds (or after `timeout`): a waiter
        that reads the request after this hears every later decision, so the first one is
        never left to the once-a-second read."""
        sub = self._subscribe()
        if sub is not None:
            await wait_at_most(sub.connected, timeout)

    async def changed(self, seconds: float) -> None:
        if self.dsn is None:  # a pool whose DSN is computed: read again soon instead
            await asyncio.sleep(min(seconds, 0.25))
            return
        self._subscribe()
        await wait_at_most(self._event, seconds)

    async def close(self) -> None:
        if self._sub is not None:
            await self._sub.close()
            self._sub = None
