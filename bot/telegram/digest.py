"""The nudge digest: unanswered approvals, oldest first; the scheduler calls run_once()."""

from __future__ import annotations

import logging

from bot.telegram.courier import Courier
from bot.telegram.views import digest_text
from taskqueue.queues.people import PeopleQueue

log = logging.getLogger("signoff.telegram.digest")


class NudgeDigest:
    """Sends the list of unanswered approvals, oldest first, when there are any."""

    def __init__(self, queue: PeopleQueue, courier: Courier, chat_id: int, *,
                 max_items: int = 30) -> None:
        self.queue, self.courier, self.chat_id = queue, courier, chat_id
        self.max_items = max_items

    async def run_once(self) -> int:
        """Send the digest; returns how many approvals it listed (0: nothing was sent)."""
        waiting = await self.queue.approval_list_open()
        if not waiting:
            log.info("nudge digest skipped: no unanswered approvals")
            return 0
        await self.courier.text(self.chat_id, digest_text(waiting, limit=self.max_items))
        log.info("nudge digest sent approvals=%d oldest_task=%s", len(waiting),
                 waiting[0].task_id)
        return len(waiting)
