"""Starting the Telegram part: a rejected token or bad settings fail fast; no token is off."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bot.telegram.app import telegram_bot
from bot.telegram.config import TelegramSettings, from_config, load
from taskqueue import ConfigError, TaskQueue
from taskqueue.config.settings import load_config
from tests.bot.conftest import make_bot, park, sent_row
from tests.bot.fake_telegram import FakeTelegram


async def test_a_rejected_token_fails_fast_with_a_clear_message(
        queue: TaskQueue, fake: FakeTelegram, settings: TelegramSettings) -> None:
    fake.fail("getMe", 401, "Unauthorized")
    bot = make_bot(settings, queue)
    with pytest.raises(ConfigError, match="rejected TELEGRAM_BOT_TOKEN"):
        await bot.start()
    await bot.stop()


@pytest.mark.parametrize(("env", "message"), [
    ({"TELEGRAM_ALLOWED_USER_IDS": "1"}, "TELEGRAM_CHAT_ID is missing"),
    ({"TELEGRAM_CHAT_ID": "-100"}, "TELEGRAM_ALLOWED_USER_IDS is missing"),
    ({"TELEGRAM_CHAT_ID": "my-group", "TELEGRAM_ALLOWED_USER_IDS": "1"}, "must be a number"),
    ({"TELEGRAM_CHAT_ID": "-100", "TELEGRAM_ALLOWED_USER_IDS": "1,alice"}, "'alice' is not"),
    ({"TELEGRAM_CHAT_ID": "-1", "TELEGRAM_ALLOWED_USER_IDS": "1",
      "TELEGRAM_API_BASE_URL": "ftp://x"}, "http"),
])
def test_bad_settings_are_refused_before_anything_starts(env: dict[str, str],
                                                         message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load({}, {"TELEGRAM_BOT_TOKEN": "1:x"} | env)


def test_the_environment_wins_over_the_config_file_and_the_token_is_env_only() -> None:
    got = load({"chat_id": -5, "allowed_user_ids": [1, 2]},
               {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_CHAT_ID": "-7",
                "TELEGRAM_API_BASE_URL": "http://127.0.0.1:8081/"})
    assert (got.chat_id, got.allowed_user_ids) == (-7, frozenset({1, 2}))
    assert got.base_url == "http://127.0.0.1:8081/bot"
    assert got.base_file_url == "http://127.0.0.1:8081/file/bot"
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN"):
        load({"token": "1:x"}, {})


async def test_without_a_token_telegram_is_off_and_says_so_once(
        queue: TaskQueue, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert telegram_bot(load({}, {}), queue) is None
    said = [r.getMessage() for r in caplog.records if "Telegram is off" in r.getMessage()]
    assert len(said) == 1 and "signoff approve ID --by WHO" in said[0]


async def test_telegram_unreachable_at_start_is_retried_and_nothing_is_lost(
        queue: TaskQueue, fake: FakeTelegram, settings: TelegramSettings) -> None:
    fake.fail("getMe", 0, times=5)
    approval = await park(queue)
    bot = make_bot(settings, queue, reconnect=0.2)
    await bot.start()
    try:
        await asyncio.wait_for(bot.started.wait(), 5)
        await sent_row(queue, approval.id)
    finally:
        await bot.stop()


def test_settings_from_the_config_file_reach_the_bot_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text("[telegram]\nchat_id = -100\nallowed_user_ids = [5, 7]\n"
                    'api_base_url = "http://127.0.0.1:9/"\n')
    got = from_config(load_config(path, env={}), {"TELEGRAM_BOT_TOKEN": "1:x"})
    assert (got.chat_id, got.allowed_user_ids) == (-100, frozenset({5, 7}))
    assert got.base_url == "http://127.0.0.1:9/bot"
