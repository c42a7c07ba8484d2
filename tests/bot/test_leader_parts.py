"""What leadership changes inside one process: the Telegram poller follows and leads, the
scheduler skips the leader's entries on a standby, two in-process services show their
roles on /healthz and /metrics and hand over on stop, and in webhook mode only the leader
registers the webhook while both serve it."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from apscheduler.triggers.interval import IntervalTrigger

from bot.scheduler import ServiceScheduler
from bot.service import Service
from bot.telegram.app import TelegramBot
from bot.telegram.config import TelegramSettings
from bot.telegram.webhook import derived_secret
from taskqueue import Config, TaskQueue, load_config
from tests.bot.conftest import ALICE, CHAT, make_bot
from tests.bot.fake_telegram import FakeTelegram
from tests.bot.test_observe import get, samples, value
from tests.bot.test_service import CONFIG
from tests.bot.test_telegram_webhook import help_update, hook, post
from tests.taskqueue.worker_helpers import wait_for


def _polls(fake: FakeTelegram) -> int:
    return len(fake.calls_to("getUpdates"))


async def _async(value: object) -> object:
    return value


async def test_a_following_bot_stops_polling_and_a_leading_one_polls_again(
        settings: TelegramSettings, queue: TaskQueue, fake: FakeTelegram) -> None:
    bot = make_bot(settings, queue)
    await bot.follow()  # as the service does before start: a standby until told to lead
    await bot.start()
    try:
        await asyncio.sleep(1.5)
        assert _polls(fake) == 0
        await bot.lead()
        await fake.wait_for(lambda: _polls(fake) > 0)
        await fake.command(CHAT, ALICE, "/help")
        await fake.wait_for(lambda: fake.calls_to("sendMessage"))
        await bot.follow()
        assert bot.application.updater is not None
        assert not bot.application.updater.running
        after = _polls(fake)
        await asyncio.sleep(1.5)
        assert _polls(fake) == after
        await bot.lead()
        await fake.wait_for(lambda: _polls(fake) > after)
    finally:
        await bot.stop()


async def test_a_409_from_get_updates_is_logged_and_polling_goes_on(
        settings: TelegramSettings, queue: TaskQueue, fake: FakeTelegram,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "signoff.telegram")
    fake.fail("getUpdates", 409, "Conflict: terminated by other getUpdates request; make sure "
              "that only one bot instance is running", times=2)
    bot = make_bot(settings, queue)
    await bot.start()
    try:
        await fake.command(CHAT, ALICE, "/help")
        await fake.wait_for(lambda: fake.calls_to("sendMessage"))
    finally:
        await bot.stop()
    assert len(fake.calls_to("getUpdates", ok=False)) > len(fake.calls_to("getUpdates"))
    assert any("409 Conflict" in r.getMessage() and "backing off" in r.getMessage()
               for r in caplog.records)


async def test_the_timer_skips_leader_entries_on_a_standby(queue: TaskQueue) -> None:
    sched = ServiceScheduler(queue, Config(), worker="w-lead")
    leading = False
    sched.is_leader = lambda: leading
    runs = {"shared": 0, "leader": 0}

    def body(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            runs[name] += 1
        return run

    sched.add("shared", body("shared"), IntervalTrigger(seconds=1), at_start=True)
    sched.add("leader", body("leader"), IntervalTrigger(seconds=1), at_start=True,
              leader_only=True)
    sched.start()
    try:
        await wait_for(lambda: _async(runs["shared"] >= 3))
        assert runs["leader"] == 0
        leading = True
        await wait_for(lambda: _async(runs["leader"] >= 2))
    finally:
        await sched.stop(grace=1)
    assert sched.leader_only == {"leader"}


async def test_the_pruner_runs_on_the_leader_alone_and_the_reaper_everywhere(
        queue: TaskQueue) -> None:
    """Each prune ends with a VACUUM of what it pruned: one a day, not one per service."""
    sched = ServiceScheduler(queue, Config(), worker="w-lead")
    sched.add_pruner()
    sched.add_reaper()
    assert sched.leader_only == {"pruner"}


async def _role(service: Service) -> tuple[int, object, float | None]:
    assert service.http is not None
    base = f"http://127.0.0.1:{service.http.port}"
    status, _, body = await get(f"{base}/healthz")
    metrics = samples((await get(f"{base}/metrics"))[2])
    return status, json.loads(body).get("role"), value(metrics, "signoff_leader")


async def test_two_services_show_their_roles_and_the_standby_leads_after_a_stop(
        dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + '\n[http]\nlisten = "127.0.0.1:0"\n')
    first = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    second = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await first.start()
    try:
        await wait_for(lambda: _async(first.is_leader()))
        await second.start()
        try:
            await wait_for(lambda: _async(_role_is(first, second)))
            assert await _role(first) == (200, "leader", 1)
            assert await _role(second) == (200, "standby", 0)
            began = time.monotonic()
            stopping = asyncio.create_task(first.stop())
            await wait_for(lambda: _async(second.is_leader()))
            took = time.monotonic() - began
            await stopping
            assert took < 2, f"the standby led {took:.1f}s after the stop began"
            assert await _role(second) == (200, "leader", 1)
        finally:
            await second.stop()
    finally:
        await first.stop()


def _role_is(first: Service, second: Service) -> bool:
    return first.is_leader() and not second.is_leader()


async def test_two_webhook_services_register_once_and_the_standby_registers_on_takeover(
        dsn: str, tmp_path: Path, settings: TelegramSettings, fake: FakeTelegram) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG)

    def service(client: str) -> Service:
        hooked = hook(settings, fake, client)
        return Service(load_config(path, env={}), dsn=dsn,
                       telegram=lambda svc: make_bot(hooked, svc.queue))

    first, second = service("a"), service("b")
    await first.start()
    try:
        await wait_for(lambda: _async(first.is_leader()))
        await second.start()
        try:
            await wait_for(lambda: _async(_role_is(first, second)))
            await asyncio.sleep(1.5)  # a standby's lead() would have registered by now
            assert [c.client for c in fake.calls_to("setWebhook")] == ["a"]
            secret = derived_secret(fake.token)
            for part in (first.telegram, second.telegram):  # both serve the shared secret
                assert isinstance(part, TelegramBot)
                assert await post(part, help_update(fake), secret) == 200
            await first.stop()
            await wait_for(lambda: _async(len(fake.calls_to("setWebhook")) == 2))
            assert [c.client for c in fake.calls_to("setWebhook")] == ["a", "b"]
            assert fake.webhook is not None and fake.webhook.secret_token == secret
            assert fake.webhook.url == "https://b.example.com/hook"
        finally:
            await second.stop()
    finally:
        await first.stop()
