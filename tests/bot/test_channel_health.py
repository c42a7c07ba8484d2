"""/healthz knows the Telegram channel: the Bot API answering 401 fails it at once, the API
down fails it once that lasts past the threshold (shortened here from 60 s to 2 s), and it
is 200 again when the API answers; the log says the channel is retrying meanwhile."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.service import Service
from bot.telegram.part import create_part
from taskqueue import UNREACHABLE_AFTER, ChannelHealth, load_config
from tests.bot.conftest import ALICE, CHAT, FAST
from tests.bot.fake_telegram import FakeTelegram
from tests.bot.test_service import CONFIG
from tests.taskqueue.worker_helpers import wait_for

THRESHOLD = 2.0  # seconds unreachable before /healthz fails (60 by default)


async def health(service: Service) -> tuple[int, dict[str, Any]]:
    assert service.http is not None
    url = f"http://127.0.0.1:{service.http.port}/healthz"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, json.loads(await response.text())


def factory(service: Service) -> Any:
    return create_part(service, unreachable_after=THRESHOLD, reconnect=0.5, policy=FAST,
                       poll_timeout=1.0, outbox_poll=0.3)


@pytest.fixture
async def service(dsn: str, tmp_path: Path, fake: FakeTelegram,
                  monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Service]:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", fake.token)
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + f'\n[http]\nlisten = "127.0.0.1:0"\n\n[telegram]\nchat_id = {CHAT}'
                    f'\nallowed_user_ids = [{ALICE["id"]}]\napi_base_url = "{fake.url}"\n')
    running = Service(load_config(path, env={}), dsn=dsn, telegram=factory)
    yield running
    await running.stop()


async def status_is(service: Service, code: int) -> dict[str, Any] | None:
    """/healthz's body once it answers `code`; a 503 counts only when Telegram fails."""
    status, body = await health(service)
    if code == 503 and "telegram" not in body["failing"]:
        return None
    return body if status == code else None


def logged(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


async def test_a_401_fails_healthz_naming_telegram_until_the_token_works_again(
        service: Service, fake: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    await service.start()
    await wait_for(lambda: status_is(service, 200), timeout=30)
    token, fake.token = fake.token, "000:revoked"  # the API now refuses our token
    body = await wait_for(lambda: status_is(service, 503), timeout=30)
    assert body["failing"] == ["telegram"], body
    assert "refuses us" in body["checks"]["telegram"] and token not in json.dumps(body)
    assert logged(caplog, "telegram: retrying: getUpdates failed")
    fake.token = token
    await wait_for(lambda: status_is(service, 200), timeout=60)
    assert logged(caplog, "telegram: the Bot API answers again")


async def test_the_api_down_fails_healthz_after_the_threshold_and_recovers(
        service: Service, fake: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    await service.start()
    await wait_for(lambda: status_is(service, 200), timeout=30)
    await fake.stop()
    body = await wait_for(lambda: status_is(service, 503), timeout=30)
    assert body["failing"] == ["telegram"] and "unreachable for" in body["checks"]["telegram"]
    assert logged(caplog, "telegram: retrying")
    await fake.start(fake.port)
    await wait_for(lambda: status_is(service, 200), timeout=60)


async def test_at_start_an_unreachable_api_is_retrying_not_started(
        service: Service, fake: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    await fake.stop()
    await service.start()
    assert logged(caplog, "telegram: retrying (the Bot API has not answered yet)")
    assert not logged(caplog, "telegram: started")
    body = await wait_for(lambda: status_is(service, 503), timeout=30)
    assert "unreachable for" in body["checks"]["telegram"], body
    await fake.start(fake.port)
    await wait_for(lambda: status_is(service, 200), timeout=60)

    async def started() -> list[str]:
        return logged(caplog, "telegram bot started mode=polling")
    await wait_for(started, timeout=30)


def test_unreachable_counts_only_past_the_threshold_and_an_answer_clears_it() -> None:
    assert UNREACHABLE_AFTER == 60.0
    slow = ChannelHealth("chat")
    slow.unreachable("ConnectError")
    assert slow.problem() is None and slow.failing_for >= 0
    now = ChannelHealth("chat", unreachable_after=0)
    now.unreachable("ConnectError")
    assert "chat unreachable for" in (now.problem() or "")
    now.answered()
    assert now.problem() is None and now.failing_for == 0
    now.refused("401")
    assert now.problem() == "chat refuses us: 401; retrying"
