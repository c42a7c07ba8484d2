"""The Telegram part inside `python -m bot`'s Service: plugged in, scheduled, stopped."""

from __future__ import annotations

import pytest

from bot.service import Service
from taskqueue import Config, ConfigError, TaskQueue
from tests.bot.conftest import ALICE, CHAT, park
from tests.bot.fake_telegram import FakeTelegram


def _config(fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch, **telegram: object) -> Config:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", fake.token)
    return Config(sections={"telegram": {
        "chat_id": CHAT, "allowed_user_ids": [ALICE["id"]], "api_base_url": fake.url} | telegram})


async def test_the_service_sends_approvals_and_schedules_the_checks(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch) -> None:
    service = Service(_config(fake, monkeypatch), dsn=dsn)
    await service.start()
    try:
        await park(queue)
        await fake.wait_for(fake.sent_with_buttons)
        assert service.scheduler is not None
        jobs = set(service.scheduler.jobs)
        assert {"nudge_digest:09:00", "nudge_digest:18:00", "incident_check"} <= jobs
        assert await service.scheduler.run_job("nudge_digest:09:00") == 1
    finally:
        await service.stop()
    assert not fake.calls_to("getUpdates") or fake.calls[-1].method in {"getUpdates",
                                                                         "sendMessage"}


async def test_the_service_fails_fast_when_the_token_is_rejected(
        dsn: str, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.fail("getMe", 401, "Unauthorized")
    service = Service(_config(fake, monkeypatch), dsn=dsn)
    with pytest.raises(ConfigError, match="rejected TELEGRAM_BOT_TOKEN"):
        await service.start()
    await service.stop()


async def test_a_token_without_allowed_users_is_refused(
        dsn: str, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch) -> None:
    service = Service(_config(fake, monkeypatch, allowed_user_ids=[]), dsn=dsn)
    with pytest.raises(ConfigError, match="TELEGRAM_ALLOWED_USER_IDS"):
        await service.start()
    await service.stop()
