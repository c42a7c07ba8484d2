"""The web channel's first pass reads the outbox only once its LISTEN holds: a question parked
while the listener was still connecting reaches the open pages at once, not a poll later."""

from __future__ import annotations

import pytest

from bot.web.channel import CHANNEL, WebChannel
from bot.web.live import Live
from taskqueue import TaskQueue
from tests.bot.conftest import park, run_after_a_slow_listen
from tests.taskqueue.worker_helpers import wait_for


async def _delivered(queue: TaskQueue) -> bool:
    rows = [r for r in await queue.notification_list(kind="approval_request")
            if r["channel"] == CHANNEL]
    return bool(rows) and all(r["delivered_at"] is not None for r in rows)


async def test_a_question_parked_before_listen_holds_is_shown_without_waiting_a_poll(
        queue: TaskQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    channel = WebChannel(queue, Live(), poll=600)
    async with run_after_a_slow_listen(monkeypatch, channel):
        await park(queue)
        # Seconds on a busy machine; the poll it waited for before is ten minutes.
        await wait_for(lambda: _delivered(queue))
