"""Listener: LISTEN on a dedicated autocommit connection, reconnecting with backoff."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import psycopg
from psycopg import sql

from taskqueue.errors import TRANSIENT, one_line

log = logging.getLogger("signoff.listener")

# Backoff between reconnection attempts (seconds): doubles from MIN up to MAX.
RECONNECT_MIN = 0.2
RECONNECT_MAX = 10.0
# An idle connection is checked this often, so a silently dead one is noticed (seconds).
CHECK_EVERY = 30.0

# Called with (channel, payload); payload None means "reconnected: you may have missed some".
OnNotify = Callable[[str, str | None], None]


class Listener:
    """`await listener.run()` until cancelled; `connected` is set while it listens."""

    def __init__(self, dsn: str, channels: Sequence[str], on_notify: OnNotify, *,
                 check_every: float = CHECK_EVERY) -> None:
        self.dsn = dsn
        self.channels = tuple(channels)
        self.on_notify = on_notify
        self.check_every = check_every
        self.connected = asyncio.Event()
        self.reconnects = 0
        self._delay = RECONNECT_MIN

    async def run(self) -> None:
        while True:
            try:
                await self._listen()
            except TRANSIENT as exc:
                self.connected.clear()
                log.warning("listener lost its connection; reconnecting in %.1fs: %s",
                            self._delay, one_line(exc))
                await asyncio.sleep(self._delay)
                self._delay = min(self._delay * 2, RECONNECT_MAX)

    async def _listen(self) -> None:
        conn = await psycopg.AsyncConnection.connect(
            self.dsn, autocommit=True, connect_timeout=5, application_name="signoff-listener")
        try:
            for channel in self.channels:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            self._on_connected()
            while True:
                async for note in conn.notifies(timeout=self.check_every):
                    self.on_notify(note.channel, note.payload)
                await conn.execute("SELECT 1")
        finally:
            self.connected.clear()
            await conn.close()

    def _on_connected(self) -> None:
        self.connected.set()
        self._delay = RECONNECT_MIN
        if self.reconnects:
            log.info("listener reconnected channels=%s", ",".join(self.channels))
            for channel in self.channels:
                self.on_notify(channel, None)
        else:
            log.info("listener listening channels=%s", ",".join(self.channels))
        self.reconnects += 1
