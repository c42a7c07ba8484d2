"""Wakes the API's long-polls when an approval changes: one subscription to the approvals'
NOTIFY channel on the process's shared listener, instead of each waiter reading the
database four times a second."""

from __future__ import annotations

import asyncio
import contextlib

from taskqueue import APPROVALS_CHANNEL, ListenerHub, Subscription


class Waker:
    """`await changed(seconds)` returns at the next change of any approval, or after
    `seconds`; it subscribes on first use and `close()` ends the subscription. With no DSN
    (a pool whose conninfo is computed) it only sleeps a quarter of a second."""

    def __init__(self, dsn: str | None) -> None:
        self.dsn = dsn
        self._event = asyncio.Event()
        self._sub: Subscription | None = None

    def _heard(self, channel: str, payload: str | None) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def changed(self, seconds: float) -> None:
        if self.dsn is None:  # a pool whose DSN is computed: read again soon instead
            await asyncio.sleep(min(seconds, 0.25))
            return
        if self._sub is None:
            self._sub = ListenerHub.shared(self.dsn).subscribe([APPROVALS_CHANNEL],
                                                               self._heard)
        event = self._event
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)

    async def close(self) -> None:
        if self._sub is not None:
            await self._sub.close()
            self._sub = None
