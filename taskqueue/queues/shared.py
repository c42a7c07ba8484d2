"""The base every facade shares: the pool, the limits and the few methods more than one role
calls (a task or an attachment by id, a task's event, the signals' figures, the ping), and
how any part opens on one connection.

A function any caller may pass its own part to (read_signals, a health check) takes this."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Self

from taskqueue.store import pooler
from taskqueue.store.common import CommonMixin
from taskqueue.store.db import resolve_dsn
from taskqueue.store.one_connection import OneConnection


class SharedQueue(CommonMixin):
    """What every part of the queue offers beside its own methods."""

    @classmethod
    @asynccontextmanager
    async def connect_single(cls, dsn: str | None = None, **kwargs: Any
                             ) -> AsyncIterator[Self]:
        """This part of the queue on one connection to `dsn` (DATABASE_URL or the embedded
        server when None), for a process that makes a few calls and exits (a `signoff`
        command): no pool, no second connection for the server's check. Its calls take
        turns on the connection; one that finds it broken connects again."""
        dsn = dsn or resolve_dsn()
        source = await OneConnection.open(dsn)
        try:
            pooler.say_once(dsn)
            queue = cls(source, **kwargs)
            await queue._check_schema()
            yield queue
        finally:
            await source.close()
