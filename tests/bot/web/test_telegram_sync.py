"""The web and Telegram stay in step: a decision in either shows in the other."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

os.environ.setdefault("PTB_TIMEDELTA", "true")

from bot.telegram.app import TelegramBot
from bot.telegram.config import TelegramSettings
from taskqueue import Status
from tests.bot.conftest import ALICE, CHAT, make_bot, sent_row
from tests.bot.fake_telegram import FakeTelegram
from tests.bot.web.conftest import Server, eventually, live, park, sign_in

pytestmark = pytest.mark.slow  # a real Chromium


@pytest.fixture
def telegram(server: Server) -> Iterator[tuple[FakeTelegram, TelegramBot]]:
    async def start() -> tuple[FakeTelegram, TelegramBot]:
        fake = FakeTelegram()
        await fake.start()
        settings = TelegramSettings(token=fake.token, chat_id=CHAT,
                                    allowed_user_ids=frozenset({ALICE["id"]}),
                                    api_base_url=fake.url)
        bot = make_bot(settings, server.queue)
        await bot.start()
        return fake, bot

    fake, bot = server.run(start())

    async def stop() -> None:
        await bot.stop()
        await fake.stop()

    server.extras.append(stop)
    yield fake, bot


def _message(server: Server, fake: FakeTelegram, approval_id: int) -> dict[str, Any]:
    row = server.run(sent_row(server.queue, approval_id))
    return fake.messages[(CHAT, row.message_id)]


def test_a_web_decision_edits_the_telegram_message(
        server: Server, page: Page, telegram: tuple[FakeTelegram, TelegramBot]) -> None:
    fake, _ = telegram
    approval = server.run(park(server.queue, "Both channels?"))
    message = _message(server, fake, approval.id)
    assert message.get("reply_markup")
    sign_in(page)
    live(page)
    page.locator(f"#approval-{approval.id} button[value=approve]").click()
    expect(page.locator(f"#approval-{approval.id} .decided")).to_contain_text("by alice")
    # The person's name, as the web shows it, never the channel's actor string (web:alice).
    eventually(lambda: "Approved</b> by alice" in message["text"])
    assert not message.get("reply_markup")


def test_a_telegram_tap_updates_the_web_page(
        server: Server, page: Page, telegram: tuple[FakeTelegram, TelegramBot]) -> None:
    fake, _ = telegram
    approval = server.run(park(server.queue, "Tap in the chat?"))
    message = _message(server, fake, approval.id)
    sign_in(page)
    live(page)
    card = page.locator(f"#approval-{approval.id}")
    expect(card.locator("button.skip")).to_be_visible()
    data = message["reply_markup"]["inline_keyboard"][0][2]["callback_data"]
    server.run(fake.tap(message, ALICE, data))
    expect(card.locator(".decided")).to_contain_text("Skipped by Alice")
    expect(card.locator("button")).to_have_count(0)
    assert server.run(server.queue.task_get(approval.task_id)).status is Status.SKIPPED
