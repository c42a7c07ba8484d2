"""Running the briefing through the worker runtime, and reading what it put in the outbox."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from taskqueue import Status, Task, TaskQueue
from tests.taskqueue.worker_helpers import run_of, running_pool, wait_status
from workloads.briefing.handler import handle

from .seed import CAP

TAGS = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)")
TELEGRAM_TAGS = {"b", "i", "code", "pre", "a"}


def untagged(html: str) -> str:
    """The HTML's text without its tags (entities left as they are)."""
    return re.sub(r"</?[a-zA-Z][^>]*>", "", html)


async def enqueue(queue: TaskQueue, day: date, **options: Any) -> int:
    return (await queue.task_enqueue(CAP, {"day": day.isoformat(),
                                           "title": f"Daily briefing {day}"}, **options)).id


async def run_briefing(queue: TaskQueue, day: date) -> Task:
    """Enqueue the day's briefing and run it in a worker pool until it finished."""
    task_id = await enqueue(queue, day)
    async with running_pool(queue, run_of(handle, CAP)):
        return await wait_status(queue, task_id, Status.SUCCEEDED, Status.FAILED)


async def messages(queue: TaskQueue, task_id: int | None = None) -> list[dict[str, Any]]:
    """The outbox's free-form messages (one row per message, whatever its deliveries)."""
    rows = await queue.notification_list(task_id=task_id, kind="message")
    return list({r["id"]: r for r in rows}.values())
