"""Telegram's flood limits, respected ahead of time: the bot's Application paces every call
with python-telegram-bot's AIORateLimiter, and a 429 that still comes is waited out once."""

from __future__ import annotations

import asyncio
import time

from telegram.ext import AIORateLimiter

from bot.telegram.app import TelegramBot, build_application
from bot.telegram.config import TelegramSettings
from taskqueue import TaskQueue
from tests.bot.conftest import park
from tests.bot.fake_telegram import FakeTelegram
from tests.timing import limit

# Lower limits than Telegram's, through the same limiter, so a few seconds show the rate:
# 10 messages per second to the group (a burst of 10 first), 15 per second in all.
GROUP_RATE, OVERALL_RATE = 10, 15
APPROVALS = 100
WATCH_SECONDS = 3.0


def _most_in_any_window(times: list[float], window: float) -> int:
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t - start < window)
               for i, start in enumerate(times))


async def test_the_default_limiter_has_telegrams_documented_limits(
        settings: TelegramSettings) -> None:
    app = build_application(settings)
    limiter = app.bot.rate_limiter
    assert isinstance(limiter, AIORateLimiter)
    overall = limiter._base_limiter
    assert overall is not None and (overall.max_rate, overall.time_period) == (30, 1)
    assert (limiter._group_max_rate, limiter._group_time_period) == (20, 60)
    assert limiter._max_retries == 0  # 429s are the Courier's: once, bounded


async def test_a_burst_of_approvals_stays_within_the_limits(
        settings: TelegramSettings, queue: TaskQueue, fake: FakeTelegram) -> None:
    for i in range(APPROVALS):
        await park(queue, f"Question {i}?")
    limiter = AIORateLimiter(overall_max_rate=OVERALL_RATE, overall_time_period=1,
                             group_max_rate=GROUP_RATE, group_time_period=1)
    bot = TelegramBot(settings, queue, poll_timeout=1.0, outbox_poll=0.3,
                      rate_limiter=limiter)
    await bot.start()
    try:
        await fake.wait_for(lambda: fake.calls_to("sendMessage"), limit(30))
        first = fake.calls_to("sendMessage")[0].started_at
        await asyncio.sleep(WATCH_SECONDS)
    finally:
        await bot.stop()
    times = [c.started_at for c in fake.calls_to("sendMessage")
             if c.started_at <= first + WATCH_SECONDS]
    assert len(times) < APPROVALS  # the limiter held the rest back
    # The leaky bucket lets a burst of GROUP_RATE through, then GROUP_RATE a second: in any
    # second at most twice the rate, and over the whole watch no more than the rate allows.
    # (Upper bounds only: a busy machine sends fewer, never more.)
    assert _most_in_any_window(times, 1.0) <= 2 * GROUP_RATE + 1
    assert len(times) <= GROUP_RATE * (WATCH_SECONDS + 1) + 2
    assert all(int(c.params["chat_id"]) == settings.chat_id
               for c in fake.calls_to("sendMessage"))


async def test_a_429_is_still_honoured_once(settings: TelegramSettings, queue: TaskQueue,
                                            fake: FakeTelegram) -> None:
    fake.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    await park(queue)
    bot = TelegramBot(settings, queue, poll_timeout=1.0, outbox_poll=0.3)  # default limiter
    await bot.start()
    try:
        await fake.wait_for(lambda: fake.calls_to("sendMessage"), limit(30))
    finally:
        await bot.stop()
    calls = fake.calls_to("sendMessage", ok=False)
    assert [c.status for c in calls] == [429, 200]
    assert calls[1].started_at - calls[0].started_at >= 1.0  # waited retry_after
    assert time.monotonic() >= calls[1].started_at
