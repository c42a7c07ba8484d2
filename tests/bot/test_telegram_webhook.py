"""Webhook mode: setWebhook with the URL and secret (by the leader only), posted updates
handled by every bot that shares the secret, bad ones refused."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.telegram.app import TelegramBot
from bot.telegram.config import TelegramSettings, from_config, load
from bot.telegram.webhook import derived_secret
from taskqueue import ConfigError, Decision, Status, TaskQueue, load_config, redact
from tests.bot.conftest import ALICE, CHAT, button, make_bot, park, sent_row
from tests.bot.fake_telegram import FakeTelegram, Webhook

URL = "https://bot.example.com/signoff/hook"
SECRET = "s3cret_Token-42"
BASE_ENV = {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_CHAT_ID": "-1",
            "TELEGRAM_ALLOWED_USER_IDS": "1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def hook_settings(settings: TelegramSettings) -> TelegramSettings:
    return dataclasses.replace(settings, webhook_url=URL, webhook_port=free_port(),
                               webhook_secret=SECRET)


@pytest.fixture
async def hookbot(hook_settings: TelegramSettings, queue: TaskQueue
                  ) -> AsyncIterator[TelegramBot]:
    bot = make_bot(hook_settings, queue)
    await bot.start()
    yield bot
    await bot.stop()


async def post(bot: TelegramBot, update: Any, secret: str | None) -> int:
    """POST an update to the bot's webhook listener as Telegram would; the HTTP status."""
    s = bot.settings
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    async with aiohttp.ClientSession() as http, http.post(
            f"http://127.0.0.1:{s.webhook_port}/{s.url_path}", json=update,
            headers=headers) as response:
        return response.status


async def _tap_update(fake: FakeTelegram, queue: TaskQueue) -> tuple[int, dict[str, Any]]:
    """A parked approval's task id, and an Approve tap on its message by Alice."""
    approval = await park(queue)
    row = await sent_row(queue, approval.id)
    msg = fake.messages[(CHAT, row.message_id or 0)]
    return approval.task_id, fake.update(fake.tap_update(msg, ALICE, button(msg, 0)))


async def test_webhook_mode_registers_the_url_and_secret_and_never_polls(
        fake: FakeTelegram, hook_settings: TelegramSettings, queue: TaskQueue,
        caplog: pytest.LogCaptureFixture) -> None:
    bot = make_bot(hook_settings, queue)
    with caplog.at_level(logging.INFO, logger="signoff.telegram"):
        await bot.start()
    try:
        assert fake.webhook == Webhook(URL, SECRET, ["message", "callback_query"])
        [line] = [r.getMessage() for r in caplog.records if "bot started" in r.getMessage()]
        assert "mode=webhook" in line and f":{hook_settings.webhook_port}/signoff/hook" in line
        assert SECRET not in line
        await asyncio.sleep(0.2)
        assert not fake.calls_to("getUpdates", ok=False)
        async with aiohttp.ClientSession() as http, http.post(
                f"{fake.url}/bot{fake.token}/getUpdates") as response:
            assert response.status == 409  # as the real API answers while a webhook is set
    finally:
        await bot.stop()


async def test_a_tap_posted_with_the_secret_is_decided(
        queue: TaskQueue, fake: FakeTelegram, hookbot: TelegramBot) -> None:
    task_id, update = await _tap_update(fake, queue)
    assert await post(hookbot, update, SECRET) == 200
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    task = await queue.task_get(task_id)
    assert task.status is Status.APPROVED and task.decision is Decision.APPROVED
    assert task.approval is not None and task.approval.decided_by == "telegram:11:Alice"
    assert fake.calls_to("answerCallbackQuery")


async def test_a_post_with_a_wrong_or_no_secret_is_refused_and_decides_nothing(
        queue: TaskQueue, fake: FakeTelegram, hookbot: TelegramBot) -> None:
    task_id, update = await _tap_update(fake, queue)
    assert await post(hookbot, update, "not-the-secret") == 403
    assert await post(hookbot, update, None) == 403
    # The secret, but not an update: refused, nothing handled.
    for garbage in ([update], {}, {"update_id": "x"}, {"update_id": 1, "message": "x"}, "{"):
        assert await post(hookbot, garbage, SECRET) == 400
    await asyncio.sleep(0.3)
    assert (await queue.task_get(task_id)).status is Status.NEEDS_APPROVAL
    assert not fake.calls_to("answerCallbackQuery", ok=False)
    assert len(fake.sent_with_buttons()) == 1


async def test_without_a_configured_secret_every_bot_derives_the_same_one_from_the_token(
        fake: FakeTelegram, hook_settings: TelegramSettings, queue: TaskQueue,
        caplog: pytest.LogCaptureFixture) -> None:
    settings = dataclasses.replace(hook_settings, webhook_secret=None)
    other = make_bot(settings, queue)
    bot = make_bot(settings, queue)
    with caplog.at_level(logging.DEBUG):
        await bot.start()
    try:
        assert fake.webhook is not None and fake.webhook.secret_token == bot.webhook_secret
        assert bot.webhook_secret == other.webhook_secret == derived_secret(fake.token)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,256}", bot.webhook_secret)  # Telegram's rule
        assert derived_secret("654321:OTHER-TOKEN") != bot.webhook_secret
        ours = [r.getMessage() for r in caplog.records if r.name.startswith("signoff")]
        assert ours and not [line for line in ours if bot.webhook_secret in line]
        # Registered with the log's RedactingFilter, which masks PTB's debug lines too.
        assert bot.webhook_secret not in redact(f"secret_token={bot.webhook_secret}")
    finally:
        await bot.stop()
        await other.stop()


def hook(settings: TelegramSettings, fake: FakeTelegram, client: str) -> TelegramSettings:
    """Webhook settings of a service called `client` (its calls are told apart by the
    fake), its own URL and port, no configured secret."""
    return dataclasses.replace(settings, api_base_url=f"{fake.url}/{client}",
                               webhook_url=f"https://{client}.example.com/hook",
                               webhook_port=free_port(), webhook_secret=None)


def help_update(fake: FakeTelegram) -> dict[str, Any]:
    """A /help command from Alice, as Telegram would post it."""
    return fake.update({"message": {
        "message_id": 1, "date": 0, "chat": {"id": CHAT, "type": "supergroup"},
        "from": ALICE, "text": "/help",
        "entities": [{"type": "bot_command", "offset": 0, "length": 5}]}})


def answered(fake: FakeTelegram, client: str) -> int:
    return len([c for c in fake.calls_to("sendMessage") if c.client == client])


async def test_two_webhook_bots_share_the_secret_and_only_the_leader_registers(
        fake: FakeTelegram, settings: TelegramSettings, queue: TaskQueue) -> None:
    leader, standby = (make_bot(hook(settings, fake, c), queue) for c in ("a", "b"))
    await standby.follow()  # as the service does before start
    await leader.start()
    await standby.start()
    try:
        [registered] = fake.calls_to("setWebhook")
        assert registered.client == "a"
        secret = derived_secret(fake.token)
        assert fake.webhook == Webhook("https://a.example.com/hook", secret,
                                       ["message", "callback_query"])
        for bot in (leader, standby):  # a proxy may route a post to either
            assert await post(bot, help_update(fake), secret) == 200
            assert await post(bot, help_update(fake), "not-the-secret") == 403
        await fake.wait_for(lambda: answered(fake, "a") and answered(fake, "b"))
        await asyncio.sleep(0.3)
        assert (answered(fake, "a"), answered(fake, "b")) == (1, 1)

        await leader.follow()  # the leader's lock moved: the standby registers its URL
        await standby.lead()
        assert [c.client for c in fake.calls_to("setWebhook")] == ["a", "b"]
        assert fake.webhook == Webhook("https://b.example.com/hook", secret,
                                       ["message", "callback_query"])
        assert await post(leader, help_update(fake), secret) == 200  # still served
        await fake.wait_for(lambda: answered(fake, "a") == 2)
    finally:
        await leader.stop()
        await standby.stop()


async def test_a_port_in_use_fails_fast_naming_the_settings_before_setwebhook(
        fake: FakeTelegram, hook_settings: TelegramSettings, queue: TaskQueue) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        settings = dataclasses.replace(hook_settings, webhook_port=busy.getsockname()[1])
        bot = make_bot(settings, queue)
        with pytest.raises(ConfigError, match="TELEGRAM_WEBHOOK_PORT"):
            await bot.start()
    assert fake.webhook is None and not fake.calls_to("setWebhook", ok=False)


async def test_polling_remains_the_default(
        fake: FakeTelegram, settings: TelegramSettings, queue: TaskQueue,
        caplog: pytest.LogCaptureFixture) -> None:
    assert not settings.webhook
    bot = make_bot(settings, queue)
    with caplog.at_level(logging.INFO, logger="signoff.telegram"):
        await bot.start()
    try:
        await fake.wait_for(lambda: fake.calls_to("getUpdates"))
        assert fake.calls_to("deleteWebhook") and not fake.calls_to("setWebhook", ok=False)
        assert fake.webhook is None
        assert any("mode=polling" in r.getMessage() for r in caplog.records)
    finally:
        await bot.stop()


def test_webhook_settings_defaults_and_environment_overrides(tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(f'[telegram]\nchat_id = -1\nallowed_user_ids = [1]\nwebhook_url = "{URL}"\n')
    got = from_config(load_config(path, env={}), {"TELEGRAM_BOT_TOKEN": "1:x"})
    assert (got.webhook, got.webhook_listen, got.webhook_port) == (True, "127.0.0.1", 8443)
    assert got.url_path == "signoff/hook" and got.webhook_secret is None
    env = {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_WEBHOOK_URL": "https://x.example",
           "TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0", "TELEGRAM_WEBHOOK_PORT": "9000",
           "TELEGRAM_WEBHOOK_SECRET": SECRET}
    got = from_config(load_config(path, env={}), env)
    assert (got.webhook_url, got.webhook_listen, got.webhook_port, got.url_path,
            got.webhook_secret) == ("https://x.example", "0.0.0.0", 9000, "telegram", SECRET)
    got = load({"webhook_url": URL, "webhook_path": "/in/"}, BASE_ENV)
    assert got.url_path == "in" and got.webhook_port == 8443
    assert not load({}, BASE_ENV).webhook


@pytest.mark.parametrize(("section", "env", "message"), [
    ({}, {"TELEGRAM_WEBHOOK_URL": "ftp://bot.example.com"}, "TELEGRAM_WEBHOOK_URL"),
    ({"webhook_url": "bot.example.com/hook"}, {}, "webhook_url.* http"),
    ({}, {"TELEGRAM_WEBHOOK_PORT": "0"}, "TELEGRAM_WEBHOOK_PORT.*1-65535"),
    ({"webhook_port": 70000}, {}, "webhook_port.*1-65535"),
    ({}, {"TELEGRAM_WEBHOOK_PORT": "https"}, "TELEGRAM_WEBHOOK_PORT"),
    ({"webhook_path": "/"}, {}, "webhook_path"),
    ({}, {"TELEGRAM_WEBHOOK_SECRET": "no spaces allowed"}, "TELEGRAM_WEBHOOK_SECRET"),
    ({"webhook_secret": "abc"}, {}, "webhook_secret.*TELEGRAM_WEBHOOK_SECRET"),
])
def test_bad_webhook_settings_are_config_errors_naming_the_key(
        section: dict[str, Any], env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(section, BASE_ENV | env)


@pytest.mark.parametrize(("toml", "env", "message"), [
    ('webhook_url = "ftp://x"', {}, r"line 2: telegram\.webhook_url: must be an http\(s\) URL"),
    ("webhook_port = 0", {}, r"line 2: telegram\.webhook_port: .*1-65535"),
    ('webhook_port = "8443"', {}, r"telegram\.webhook_port: must be a whole number"),
    ('webhook_path = "/"', {}, r"telegram\.webhook_path"),
    ('webhook_secret = "abc"', {}, r"telegram\.webhook_secret: .*TELEGRAM_WEBHOOK_SECRET"),
    ("", {"TELEGRAM_WEBHOOK_PORT": "99999"}, "TELEGRAM_WEBHOOK_PORT must be a TCP port"),
    ("", {"TELEGRAM_WEBHOOK_URL": "mailto:me"}, "TELEGRAM_WEBHOOK_URL must be an http"),
    ("", {"TELEGRAM_WEBHOOK_SECRET": "a/b"}, "TELEGRAM_WEBHOOK_SECRET must be"),
])
def test_bad_webhook_settings_in_the_config_file_name_the_key_and_line(
        tmp_path: Path, toml: str, env: dict[str, str], message: str) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(f"[telegram]\n{toml}\n")
    with pytest.raises(ConfigError, match=message):
        from_config(load_config(path, env={}), env)
