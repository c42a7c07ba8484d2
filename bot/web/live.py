"""Live updates: every open page holds a server-sent-events stream, told "changed" on
every NOTIFY of the notification outbox (a park, an approve short of the count, a decision,
an expiry, a cancel)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

# Each stream's queue holds at most this many unsent events (one is enough to refresh).
QUEUE_SIZE = 4


class Live:
    """`publish()` reaches every subscriber; `close()` ends every stream (shutdown)."""

    def __init__(self) -> None:
        self._streams: set[asyncio.Queue[str | None]] = set()
        # Set by close(): a page's reconnect (its EventSource retries after 1 s, on a kept-alive
        # connection the stopping server still serves) ends at once instead of holding the
        # server's shutdown until its timeout.
        self._closed = False

    @property
    def count(self) -> int:
        return len(self._streams)

    def publish(self, event: str = "changed") -> None:
        for stream in list(self._streams):
            with contextlib.suppress(asyncio.QueueFull):  # a refresh is pending anyway
                stream.put_nowait(event)

    def close(self) -> None:
        self._closed = True
        for stream in list(self._streams):
            with contextlib.suppress(asyncio.QueueFull):
                stream.put_nowait(None)

    @contextlib.asynccontextmanager
    async def subscribed(self) -> AsyncIterator[asyncio.Queue[str | None]]:
        stream: asyncio.Queue[str | None] = asyncio.Queue(QUEUE_SIZE)
        if self._closed:
            stream.put_nowait(None)
        self._streams.add(stream)
        try:
            yield stream
        finally:
            self._streams.discard(stream)
