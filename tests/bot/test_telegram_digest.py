"""The nudge digest, the incident alert and free-form messages in the chat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from telegram import Bot

from bot.telegram.courier import Courier
from bot.telegram.delivery import TelegramChannel
from bot.telegram.digest import NudgeDigest
from bot.telegram.store import CHANNEL
from taskqueue import IncidentAlert, SignalConfig, TaskQueue
from tests.bot.conftest import CHAT, FAST, park
from tests.bot.fake_telegram import FakeTelegram

# Fires as soon as one task is claimable: no need to wait six hours in a test.
EAGER = SignalConfig(incident_count=0, incident_age_hours=0)


@pytest.fixture
async def courier(fake: FakeTelegram) -> AsyncIterator[Courier]:
    async with Bot(fake.token, base_url=f"{fake.url}/bot") as bot:
        yield Courier(bot, FAST)


async def test_the_digest_lists_unanswered_approvals_oldest_first_only_when_any(
        queue: TaskQueue, fake: FakeTelegram, courier: Courier) -> None:
    digest = NudgeDigest(queue, courier, CHAT)
    assert await digest.run_once() == 0 and not fake.calls_to("sendMessage")
    first = await park(queue, "First <one>?")
    await park(queue, "Second?")
    assert await digest.run_once() == 2
    [call] = fake.calls_to("sendMessage")
    text = call.params["text"]
    assert "2 approvals waiting" in text and "min)" in text
    assert text.index(f"task {first.task_id}: First &lt;one&gt;?") < text.index("Second?")


def channel(queue: TaskQueue, courier: Courier) -> TelegramChannel:
    return TelegramChannel(queue, courier, CHAT, retry_base=0.1, retry_max=0.2)


async def test_the_incident_alert_is_sent_once_per_change_and_survives_a_restart(
        queue: TaskQueue, fake: FakeTelegram, courier: Courier) -> None:
    await queue.notification_channel_register(CHANNEL)
    alert, sender = IncidentAlert(queue, EAGER), channel(queue, courier)
    assert (await alert.run_once()).announced is None
    task = await queue.task_enqueue("jobs", {})
    assert (await alert.run_once()).announced == "alert"
    assert (await alert.run_once()).announced is None
    restarted = IncidentAlert(queue, EAGER)
    assert (await restarted.run_once()).announced is None
    assert (await sender.run_once()).sent == 1
    await queue.task_cancel(task.id)
    assert (await restarted.run_once()).announced == "recovery"
    assert (await alert.run_once()).announced is None
    assert (await sender.run_once()).sent == 1
    texts = [c.params["text"] for c in fake.calls_to("sendMessage")]
    assert len(texts) == 2 and "Incident" in texts[0] and "Recovered" in texts[1]


async def test_an_alert_that_could_not_be_sent_is_sent_later_not_lost(
        queue: TaskQueue, fake: FakeTelegram, courier: Courier) -> None:
    await queue.notification_channel_register(CHANNEL)
    await queue.task_enqueue("jobs", {})
    assert (await IncidentAlert(queue, EAGER).run_once()).announced == "alert"
    fake.fail("sendMessage", 403, "Forbidden: bot was kicked from the group chat")
    sender = channel(queue, courier)
    assert (await sender.run_once()).failed == 1
    await asyncio.sleep(0.15)
    assert (await sender.run_once()).sent == 1
    assert "Incident" in fake.calls_to("sendMessage")[-1].params["text"]


async def test_a_free_form_message_keeps_only_telegrams_tags(
        queue: TaskQueue, fake: FakeTelegram, courier: Courier) -> None:
    await queue.notification_channel_register(CHANNEL)
    await queue.notification_send("Briefing", "plain text", html=(
        '<b>Today</b> <script>alert(1)</script><a href="javascript:x">bad</a>'
        '<a href="https://ok.example/?a=1&b=2">ok</a> <i>unclosed'))
    await queue.notification_send("Plain <one>", "a & b")
    assert (await channel(queue, courier).run_once()).sent == 2
    first, second = (c.params["text"] for c in fake.calls_to("sendMessage"))
    assert first.startswith("<b>Today</b> alert(1)bad")
    assert '<a href="https://ok.example/?a=1&amp;b=2">ok</a>' in first
    assert first.endswith("<i>unclosed</i>") and "<script" not in first
    assert second == "<b>Plain &lt;one&gt;</b>\na &amp; b"
