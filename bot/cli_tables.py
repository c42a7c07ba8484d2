"""A channel's own tables, opened for one CLI command (`signoff token ...`, `signoff user
...`): its migrations applied when missing, then one connection of the CLI's database."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from taskqueue import TaskQueue, resolve_dsn

Store = TypeVar("Store")


@contextlib.asynccontextmanager
async def opened(migrate: Callable[[str], Awaitable[Any]],
                 store: Callable[[Any], Store]) -> AsyncIterator[Store]:
    """`store(pool)` on the CLI's database (DATABASE_URL or the embedded server), after
    `migrate(dsn)` made the channel's tables."""
    dsn = resolve_dsn()
    await migrate(dsn)
    async with TaskQueue.connect(dsn, min_size=1, max_size=1) as queue:
        yield store(queue.pool)
