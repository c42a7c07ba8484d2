"""The Telegram channel's own table (`telegram_messages`): which chat message shows which
approval, its buttons' token, and whether it was closed. Migrated by the bot as owner
"telegram"; its queries are named blocks in sql/queries.sql, loaded once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from taskqueue import migrate, parse_queries
from taskqueue.queues.shared import SharedQueue

CHANNEL = "telegram"
OWNER = "telegram"


@dataclass(frozen=True)
class SentMessage:
    """An approval's request as a chat message."""

    approval_id: int
    token: str
    chat_id: int
    message_id: int
    sent_at: datetime
    closed_at: datetime | None


@cache
def _queries() -> dict[str, str]:
    return parse_queries(resources.files(__package__).joinpath("sql", "queries.sql")
                         .read_text("utf-8"))


async def migrate_messages(dsn: str) -> list[str]:
    """Apply the channel's own migrations (after the core's)."""
    folder = Path(str(resources.files(__package__).joinpath("migrations")))
    return await migrate(dsn, folder, owner=OWNER)


class MessageStore:
    """Reads and writes `telegram_messages` on the queue's pool."""

    def __init__(self, queue: SharedQueue) -> None:
        self.queue = queue

    async def _one(self, name: str, params: dict[str, Any]) -> SentMessage | None:
        async with self.queue.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(_queries()[name], params)
            row = await cur.fetchone() if cur.description else None
        return SentMessage(**row) if row else None

    async def message_save(self, approval_id: int, token: str, chat_id: int,
                           message_id: int) -> SentMessage | None:
        """Record the request's message; returns the one it replaces, if any."""
        return await self._one("message_save", {"approval_id": approval_id, "token": token,
                                                "chat_id": chat_id, "message_id": message_id})

    async def message_get(self, approval_id: int) -> SentMessage | None:
        return await self._one("message_get", {"approval_id": approval_id})

    async def message_find(self, chat_id: int, message_id: int) -> SentMessage | None:
        return await self._one("message_find", {"chat_id": chat_id, "message_id": message_id})

    async def message_close(self, approval_id: int) -> SentMessage | None:
        """Mark the message closed; None when it was closed already (or never sent)."""
        return await self._one("message_close", {"approval_id": approval_id})
