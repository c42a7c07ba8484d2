"""The web channel's first pass reads the outbox only once its LISTEN holds: a question parked
while the listener was still connecting reaches the open pages at once, not a poll later."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from bot.web.channel import CHANNEL, WebChannel
from bot.web.live import Live
from taskqueue import ListenerHub, TaskQueue
from tests.bot.conftest import park
from tests.taskqueue.worker_helpers import wait_for
from tests.timing import limit


async def _delivered(queue: TaskQueue) -> bool:
    rows = [r for r in await queue.notification_list(kind="approval_request")
            if r["channel"] == CHANNEL]
    return bool(rows) and all(r["delivered_at"] is not None for r in rows)


async def test_a_question_parked_before_listen_holds_is_shown_without_waiting_a_poll(
        queue: TaskQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    original = ListenerHub._sync

    async def slow_listen(hub: ListenerHub, conn: psycopg.AsyncConnection) -> None:
        await asyncio.sleep(3)  # a busy machine's slow connection
        await original(hub, conn)

    monkeypatch.setattr(ListenerHub, "_sync", slow_listen)
    channel = WebChannel(queue, Live(), poll=600)
    first_pass = asyncio.Event()
    run_once = channel.run_once

    async def noted() -> int:
        try:
            return await run_once()
        finally:
            first_pass.set()

    monkeypatch.setattr(channel, "run_once", noted)
    running = asyncio.create_task(channel.run())
    try:
        await asyncio.wait_for(first_pass.wait(), limit(None))
        await park(queue)
        # Seconds on a busy machine; the poll it waited for before is ten minutes.
        await wait_for(lambda: _delivered(queue))
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
