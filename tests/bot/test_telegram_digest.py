"""The nudge digest and the incident alert: sent only when due, once per change."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import Bot

from bot.telegram.courier import Courier
from bot.telegram.digest import IncidentAlert, NudgeDigest
from taskqueue import SignalConfig, TaskQueue
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


async def test_the_incident_alert_is_sent_once_per_change_and_survives_a_restart(
        queue: TaskQueue, fake: FakeTelegram, courier: Courier) -> None:
    alert = IncidentAlert(queue, courier, CHAT, EAGER)
    assert (await alert.run_once()).announced is None
    task = await queue.task_enqueue("jobs", {})
    assert (await alert.run_once()).announced == "alert"
    assert (await alert.run_once()).announced is None
    restarted = IncidentAlert(queue, courier, CHAT, EAGER)
    assert (await restarted.run_once()).announced is None
    await queue.task_cancel(task.id)
    assert (await restarted.run_once()).announced == "recovery"
    assert (await alert.run_once()).announced is None
    texts = [c.params["text"] for c in fake.calls_to("sendMessage")]
    assert len(texts) == 2 and "Incident" in texts[0] and "Recovered" in texts[1]


async def test_an_alert_that_could_not_be_sent_is_sent_on_the_next_check(
        queue: TaskQueue, fake: FakeTelegram, courier: Courier) -> None:
    alert = IncidentAlert(queue, courier, CHAT, EAGER)
    await queue.task_enqueue("jobs", {})
    fake.fail("sendMessage", 403, "Forbidden: bot was kicked from the group chat")
    with pytest.raises(Exception, match="kicked"):
        await alert.run_once()
    assert (await alert.run_once()).announced == "alert"
