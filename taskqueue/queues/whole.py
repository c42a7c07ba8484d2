"""TaskQueue: every part of the queue in one object, the one-import convenience.

Scripts and the CLI use it; the service builds one and hands it to each caller, which sees
it as its own part (a TaskQueue is an instance of every facade)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from taskqueue.queues.asker import AskerQueue
from taskqueue.queues.channel import ChannelQueue
from taskqueue.queues.maintenance import MaintenanceQueue
from taskqueue.queues.operator import OperatorQueue
from taskqueue.queues.producer import ProducerQueue
from taskqueue.queues.worker import WorkerQueue
from taskqueue.store import pooler
from taskqueue.store.db import check_pooled, check_reachable, connection_kwargs, resolve_dsn

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

    from taskqueue.store.base import Conn


class TaskQueue(WorkerQueue, ProducerQueue, AskerQueue, ChannelQueue, MaintenanceQueue,
                OperatorQueue):
    """Durable tasks in PostgreSQL. Every method is one transaction."""

    @classmethod
    @asynccontextmanager
    async def connect(cls, dsn: str | None = None, *, min_size: int = 1, max_size: int = 4,
                      **kwargs: Any) -> AsyncIterator[TaskQueue]:
        """Open a pool on `dsn` (DATABASE_URL or the embedded server when None)."""
        # Imported here: a short-lived command (connect_single) never loads the pool.
        from psycopg_pool import AsyncConnectionPool

        from taskqueue.store import reconnect

        dsn = dsn or resolve_dsn()
        await check_reachable(dsn)
        pooler.say_once(dsn)
        reconnect.install()
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            dsn, min_size=min_size, max_size=max_size, open=False,
            kwargs=connection_kwargs(dsn),
            check=check_pooled,
        )
        await pool.open(wait=True, timeout=30)
        try:
            queue = cls(pool, **kwargs)
            await queue._check_schema()
            yield queue
        finally:
            await pool.close()
