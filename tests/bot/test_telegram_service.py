"""The Telegram part inside `python -m bot`'s Service: plugged in, scheduled, sharing the
process's one LISTEN connection, stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.service import Service
from taskqueue import Config, ConfigError, ListenerHub, TaskQueue, load_config
from tests.bot.conftest import ALICE, CHAT, park
from tests.bot.fake_telegram import FakeTelegram
from tests.taskqueue.worker_helpers import (
    listener_backends,
    terminate_listener,
    wait_for,
    wait_status,
)


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


SHARED = """\
[worker]
poll_interval_seconds = 60
grace_seconds = 1

[capabilities.mail]
handler = "tests.taskqueue.handlers_for_tests:quick"
mode = "pool"

[capabilities.post]
handler = "tests.taskqueue.handlers_for_tests:quick"
mode = "pool"

[telegram]
chat_id = {chat}
allowed_user_ids = [{alice}]
api_base_url = "{url}"
"""


# The service's parts that listen: two pools, the delivery, the web channel, the API's waker.
PARTS = 5


def _texts(fake: FakeTelegram, word: str) -> list[str]:
    return [c.params["text"] for c in fake.calls_to("sendMessage") if word in c.params["text"]]


async def _woken(queue: TaskQueue, fake: FakeTelegram, capability: str, word: str) -> None:
    """A task NOTIFY wakes the pool and a notification NOTIFY wakes the delivery: each goes
    well within the pools' (60 s) and the delivery's (30 s) polling."""
    enq = await queue.task_enqueue(capability, {})
    await queue.notification_send("Shared", word)
    await wait_status(queue, enq.id, "succeeded", timeout=3)
    await fake.wait_for(lambda: _texts(fake, word), timeout=3)


async def test_the_service_holds_one_listen_connection_for_its_pools_and_delivery(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", fake.token)
    path = tmp_path / "signoff.toml"
    path.write_text(SHARED.format(chat=CHAT, alice=ALICE["id"], url=fake.url))
    service = Service(load_config(path), dsn=dsn)
    await service.start()
    try:
        hub = ListenerHub.shared(dsn)
        # Two pools, the Telegram delivery, the web channel (the inbox is served by
        # default) and the API's decision waker (it listens from the start), all on the one
        # connection.
        await wait_for(lambda: _all_listening(hub, PARTS))
        assert len(listener_backends(dsn)) == 1
        await _woken(queue, fake, "mail", "first")
        assert terminate_listener(dsn) == 1
        await wait_for(lambda: _async(hub.connections == 2))
        await wait_for(lambda: _all_listening(hub, PARTS))
        assert len(listener_backends(dsn)) == 1
        await _woken(queue, fake, "post", "second")
    finally:
        await service.stop()
    assert listener_backends(dsn) == []


async def _all_listening(hub: ListenerHub, n: int) -> bool:
    return len(hub.subscriptions) == n and all(s.connected.is_set() for s in hub.subscriptions)


async def _async(value: bool) -> bool:
    return value
