"""Fixtures for the Telegram tests: the fake Bot API, settings pointed at it, a running bot."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import psycopg
import pytest

os.environ.setdefault("PTB_TIMEDELTA", "true")

from bot.telegram.app import TelegramBot
from bot.telegram.config import TelegramSettings
from bot.telegram.courier import RetryPolicy
from bot.telegram.store import MessageStore, SentMessage
from taskqueue import Approval, Event, ListenerHub, NewAttachment, TaskQueue
from tests.bot.fake_telegram import FakeTelegram, user
from tests.timing import limit

CHAT = -100123
ALICE = user(11, "Alice")
BOB = user(22, "Bob")
MALLORY = user(66, "Mallory")
FAST = RetryPolicy(attempts=4, backoff=0.05, max_backoff=0.2, max_retry_after=5)


@contextlib.asynccontextmanager
async def run_after_a_slow_listen(monkeypatch: pytest.MonkeyPatch,
                                  channel: Any) -> AsyncIterator[None]:
    """`channel.run()` while its LISTEN holds only 3 s after the listener connects (a busy
    machine's slow connection); the block runs once the channel's first pass is done."""
    original = ListenerHub._sync

    async def slow_listen(hub: ListenerHub, conn: psycopg.AsyncConnection) -> None:
        await asyncio.sleep(3)
        await original(hub, conn)

    monkeypatch.setattr(ListenerHub, "_sync", slow_listen)
    first_pass = asyncio.Event()
    run_once = channel.run_once

    async def noted() -> Any:
        try:
            return await run_once()
        finally:
            first_pass.set()

    monkeypatch.setattr(channel, "run_once", noted)
    running = asyncio.create_task(channel.run())
    try:
        await asyncio.wait_for(first_pass.wait(), limit(None))
        yield
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def stopped(stop: Awaitable[None], what: str) -> None:
    """Await a teardown's `stop`, bounded: past the suite's limit it fails naming `what` and
    every task still pending where it waits, instead of hanging the run."""
    try:
        await asyncio.wait_for(stop, limit(None))
    except TimeoutError:
        pending = []
        for task in asyncio.all_tasks():
            frames = task.get_stack(limit=3)
            where = " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in frames)
            pending.append(f"{task.get_name()} at {where}")
        raise AssertionError(f"{what} did not stop; pending: {'; '.join(pending)}") from None


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram()
    await server.start()
    yield server
    await stopped(server.stop(), "the fake Bot API")


@pytest.fixture
def settings(fake: FakeTelegram) -> TelegramSettings:
    return TelegramSettings(token=fake.token, chat_id=CHAT,
                            allowed_user_ids=frozenset({ALICE["id"], BOB["id"]}),
                            api_base_url=fake.url)


def make_bot(settings: TelegramSettings, queue: TaskQueue, **kwargs: Any) -> TelegramBot:
    kwargs = {"policy": FAST, "poll_timeout": 1.0, "outbox_poll": 0.3} | kwargs
    return TelegramBot(settings, queue, **kwargs)


@pytest.fixture
async def tgbot(settings: TelegramSettings, queue: TaskQueue) -> AsyncIterator[TelegramBot]:
    bot = make_bot(settings, queue)
    await bot.start()
    yield bot
    await stopped(bot.stop(), "the Telegram bot")


async def park(queue: TaskQueue, question: str = "Send the application?", *,
               request: dict[str, Any] | None = None, capability: str = "jobs",
               attachments: tuple[NewAttachment, ...] = (),
               expires_in: float | None = None) -> Approval:
    """Enqueue, claim and park a task; its approval."""
    await queue.task_enqueue(capability, {"n": 1})
    task = await queue.task_claim(capability, "w1")
    assert task is not None
    return await queue.task_park(task.id, "w1", question, claim=task.claim,
                                 request=request or {}, attachments=attachments,
                                 expires_in=expires_in)


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float | None = None) -> Any:
    """Await `check()` until it is truthy; its value, or AssertionError past the suite's limit."""
    deadline = time.monotonic() + limit(timeout)
    while not (value := await check()):
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the database")
        await asyncio.sleep(0.02)
    return value


async def sent_row(queue: TaskQueue, approval_id: int) -> SentMessage:
    """The approval's message once it is sent."""
    async def check() -> SentMessage | None:
        return await MessageStore(queue).message_get(approval_id)
    return await eventually(check)


def button(message: dict[str, Any], index: int) -> str:
    """The callback data of a message's button (0 Approve, 1 Revise, 2 Skip)."""
    return str(message["reply_markup"]["inline_keyboard"][0][index]["callback_data"])


async def events(queue: TaskQueue, task_id: int, kind: str) -> list[Event]:
    detail = await queue.task_detail(task_id)
    return [e for e in detail.events if e.kind == kind]
