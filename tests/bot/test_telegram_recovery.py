"""Delivery recovers in seconds: a service killed holding rows, a run of 502s, and the
width of the double-send window (Telegram answered, the message's ids not yet stored)."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import psycopg
import pytest
from telegram import Bot

from bot.telegram.courier import Courier, RetryPolicy
from bot.telegram.delivery import TelegramChannel
from bot.telegram.store import CHANNEL, MessageStore
from taskqueue import TaskQueue
from tests.bot.conftest import ALICE, CHAT, park
from tests.bot.fake_telegram import FakeTelegram
from tests.taskqueue.worker_helpers import ROOT, wait_for
from tests.timing import limit


@pytest.fixture
async def ptb_bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(fake.token, base_url=f"{fake.url}/bot",
                   base_file_url=f"{fake.url}/file/bot") as bot:
        yield bot


def requests_sent(fake: FakeTelegram) -> list[str]:
    """The texts of the approval messages Telegram accepted (those with buttons)."""
    return [c.params["text"] for c in fake.calls_to("sendMessage")
            if "reply_markup" in c.params and c.answered_at is not None]


def spawn_service(config: Path, dsn: str, fake: FakeTelegram, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
           "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": fake.url}
    env.pop("SIGNOFF_CONFIG", None)
    with out.open("ab") as f:
        return subprocess.Popen([sys.executable, "-m", "bot", "--config", str(config)],
                                cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


async def claimed_rows(dsn: str) -> int:
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM notification_deliveries WHERE channel = %s "
            "AND claimed_by IS NOT NULL AND delivered_at IS NULL", (CHANNEL,))
        row = await cur.fetchone()
    return int(row[0]) if row else 0


@pytest.mark.slow
async def test_a_service_killed_while_holding_rows_delivers_them_seconds_after_restart(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text(f"[telegram]\nchat_id = {CHAT}\nallowed_user_ids = [{ALICE['id']}]\n"
                      "digest = false\n")
    parked = [await park(queue, f"Question {i}?") for i in range(3)]
    fake.delays["sendMessage"] = 6.0  # longer than PTB's 5 s read timeout: it hangs
    out = tmp_path / "service.log"
    first = spawn_service(config, dsn, fake, out)
    try:
        await wait_for(lambda: claimed_rows(dsn), timeout=20)
        await fake.wait_for(lambda: fake.calls_to("sendMessage", ok=False), timeout=10)
        first.kill()  # kill -9 while it holds the rows, mid-send
        first.wait()
    finally:
        stop(first)
    assert await claimed_rows(dsn) == 3 and requests_sent(fake) == []
    fake.delays.clear()
    restarted_at = time.monotonic()
    second = spawn_service(config, dsn, fake, out)
    try:
        await fake.wait_for(lambda: len(requests_sent(fake)) == 3, timeout=25)
        took = time.monotonic() - restarted_at
        for approval in parked:  # the ids are stored just after Telegram's answer
            await wait_for(lambda a=approval: MessageStore(queue).message_get(a.id), timeout=5)
    finally:
        stop(second)
    print(f"\nrestart to all 3 delivered: {took:.1f}s")
    assert took < 12, out.read_text()
    assert sorted(requests_sent(fake)) == sorted(set(requests_sent(fake)))


async def test_six_502s_are_retried_on_the_rows_backoff_not_the_poll(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    policy = RetryPolicy(attempts=5, backoff=0.05, max_backoff=0.2)
    channel = TelegramChannel(queue, Courier(ptb_bot, policy), CHAT, retry_base=1.0, poll=30)
    fake.fail("sendMessage", 502, "Bad Gateway", times=6)
    running = asyncio.create_task(channel.run())
    try:
        started = time.monotonic()
        await park(queue)
        await fake.wait_for(lambda: requests_sent(fake), timeout=25)
        took = time.monotonic() - started
        await wait_for(lambda: _delivered(queue), timeout=10)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    statuses = [c.status for c in fake.calls if c.method == "sendMessage"]
    assert statuses == [502] * 6 + [200]
    # One call's five attempts, the row's backoff (a jittered wait of at most 1 s), then the
    # sixth 502 and a success: about 2 s, not the 30 s poll. The bound leaves room for a
    # busy machine (5 s failed once in a long combined run) and still tells the two apart.
    assert took < 15, took
    fifth, sixth = [c.started_at for c in fake.calls if c.method == "sendMessage"][4:6]
    assert sixth - fifth < 15
    row = await _delivered(queue)
    assert row is not None and row["attempts"] == 2


async def _delivered(queue: TaskQueue) -> dict[str, object] | None:
    [row] = [r for r in await queue.notification_list(kind="approval_request")
             if r["channel"] == CHANNEL]
    return row if row["delivered_at"] is not None else None


async def test_the_double_send_window_is_milliseconds(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """From Telegram's answer to the commit of the message's ids: a crash in between is
    the only way one approval message is sent twice."""
    saved: dict[int, float] = {}
    original = MessageStore.message_save

    async def timed(self: MessageStore, approval_id: int, *args: object) -> object:
        result = await original(self, approval_id, *args)  # type: ignore[arg-type]
        saved[args[2]] = time.monotonic()  # type: ignore[index]
        return result

    monkeypatch.setattr(MessageStore, "message_save", timed)
    await queue.notification_channel_register(CHANNEL)
    channel = TelegramChannel(queue, Courier(ptb_bot), CHAT)
    for i in range(40):
        await park(queue, f"Question {i}?")
    assert (await channel.run_once()).sent == 40
    answered = {c.answered_at: c for c in fake.calls_to("sendMessage")}
    windows = []
    for at, call in answered.items():
        message_id = max(mid for (_, mid), m in fake.messages.items()
                         if m.get("text") == call.params["text"])
        assert at is not None
        windows.append((saved[message_id] - at) * 1000)
    windows.sort()
    print(f"\ndouble-send window over {len(windows)} sends: median "
          f"{statistics.median(windows):.1f} ms, p95 {windows[int(len(windows) * 0.95)]:.1f} "
          f"ms, max {windows[-1]:.1f} ms")
    assert len(windows) == 40 and windows[0] > 0 and windows[-1] < 500


class _SeenWaiting(asyncio.Event):
    """An Event that says when someone waits on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = asyncio.Event()

    async def wait(self) -> Literal[True]:
        self.waiting.set()
        return await super().wait()


async def test_a_stop_that_arrives_with_a_wake_still_stops_the_delivery(
        queue: TaskQueue, ptb_bot: Bot) -> None:
    """Python 3.11's asyncio.wait_for drops a cancel that arrives as the wait it guards
    ends: the delivery loop, woken and stopped in the same moment, went on for ever, and
    the service's stop (and a test's teardown, under load) waited for it."""
    channel = TelegramChannel(queue, Courier(ptb_bot), CHAT, poll=30)
    seen = channel._wake = _SeenWaiting()
    running = asyncio.create_task(channel.run())
    try:
        await asyncio.wait_for(seen.waiting.wait(), limit(None))  # idle at its wait
        channel.wake()  # a NOTIFY ...
        running.cancel()  # ... and the stop, together
        done, _ = await asyncio.wait({running}, timeout=limit(None))
        assert running in done and running.cancelled()
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
