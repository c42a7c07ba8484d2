"""Asked over HTTP, decided with a tap in Telegram (the fake Bot API), heard by the
asker's long-poll, then reported done."""

from __future__ import annotations

import asyncio

from bot.telegram.app import TelegramBot
from tests.bot.api.conftest import Api
from tests.bot.conftest import ALICE, CHAT, button, sent_row
from tests.bot.fake_telegram import FakeTelegram


async def test_ask_long_poll_telegram_tap_then_done(api: Api, fake: FakeTelegram,
                                                    tgbot: TelegramBot) -> None:
    token = await api.token("ci", None, ("ask",))
    status, made, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "deploys", "question": "Deploy web 1.2?",
        "request": {"service": "web", "version": "1.2"}})
    assert status == 201
    waiting = asyncio.create_task(api.call("GET", f"/api/v1/requests/{made['id']}?wait=60",
                                           token))
    approval = (await api.queue.task_get(made["id"])).approval
    assert approval is not None
    row = await sent_row(api.queue, approval.id)
    msg = fake.messages[(CHAT, row.message_id or 0)]
    assert "Deploy web 1.2?" in msg["text"]
    await fake.tap(msg, ALICE, button(msg, 0))
    status, decided, _ = await asyncio.wait_for(waiting, 30)
    assert (status, decided["status"], decided["decided_by"]) == (
        200, "approved", "telegram:11:Alice")
    status, done, _ = await api.call("POST", f"/api/v1/requests/{made['id']}/done", token,
                                     json={"result": {"deployed": "1.2"}})
    assert (status, done["done"]) == (200, True)
