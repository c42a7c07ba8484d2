"""The Telegram channel reads its own `[telegram]` table (kept unparsed by the core) and the
TELEGRAM_* variables over it; errors name the key and its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.telegram.config import from_config
from taskqueue import ConfigError, load_config


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(text)
    return path


def test_the_environment_overrides_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, "[telegram]\nchat_id = 1\nallowed_user_ids = [5]\n")
    env = {"TELEGRAM_BOT_TOKEN": "123:abc", "TELEGRAM_CHAT_ID": "-100",
           "TELEGRAM_ALLOWED_USER_IDS": "7, 8", "TELEGRAM_API_BASE_URL": "http://127.0.0.1:9",
           "TELEGRAM_DIGEST_TIMES": "08:30"}
    tg = from_config(load_config(path, env={}), env)
    assert (tg.token, tg.chat_id, tg.allowed_user_ids) == ("123:abc", -100, frozenset({7, 8}))
    assert tg.api_base_url == "http://127.0.0.1:9" and tg.digest_times == ("08:30",)
    assert tg.enabled
    assert from_config(load_config(path, env={}), {}).chat_id == 1


def test_digest_times_default_to_the_nudges_table(tmp_path: Path) -> None:
    path = _file(tmp_path, "[nudges]\ndigest_times = ['07:15']\n")
    assert from_config(load_config(path, env={}), {}).digest_times == ("07:15",)


@pytest.mark.parametrize(("toml", "message"), [
    ("token = '123:abc'", r"line 2: telegram\.token: secrets never go in the file"),
    ("allowed_user_ids = ['alice']", r"line 2: telegram\.allowed_user_ids"),
    ('chat_id = "@mychannel"', r"line 2: telegram\.chat_id: must be a chat id"),
    ("allowed_user_ids = [5, -3]", r"line 2: telegram\.allowed_user_ids: must be positive"),
    ('api_base_url = "ftp://x"', r"line 2: telegram\.api_base_url: must be an http\(s\) URL"),
    ('webhook_listen = "0.0 .0.0"', r"line 2: telegram\.webhook_listen: must be an address"),
    ("colour = 'blue'", r"line 2: telegram\.colour"),
])
def test_settings_the_bot_cannot_use_are_refused_with_key_and_line(
        tmp_path: Path, toml: str, message: str) -> None:
    config = load_config(_file(tmp_path, f"[telegram]\n{toml}\n"), env={})
    with pytest.raises(ConfigError, match=message):
        from_config(config, {})


def test_bad_telegram_environment_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TELEGRAM_ALLOWED_USER_IDS"):
        from_config(load_config(None, env={}), {"TELEGRAM_ALLOWED_USER_IDS": "alice"})
