"""Telegram settings: the `[telegram]` config section, overridden by TELEGRAM_* variables."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from taskqueue import ConfigError

DEFAULT_API_BASE_URL = "https://api.telegram.org"
DEFAULT_DIGEST_TIMES = ("09:00", "18:00")
_TIME = re.compile(r"^([01]?[0-9]|2[0-3]):([0-5][0-9])$")
_ENV = {
    "chat_id": "TELEGRAM_CHAT_ID",
    "allowed_user_ids": "TELEGRAM_ALLOWED_USER_IDS",
    "api_base_url": "TELEGRAM_API_BASE_URL",
    "digest_times": "TELEGRAM_DIGEST_TIMES",
}


@dataclass(frozen=True)
class TelegramSettings:
    """Where approvals go and who may decide. No token means Telegram is off."""

    token: str | None = None
    chat_id: int | None = None
    allowed_user_ids: frozenset[int] = frozenset()
    api_base_url: str = DEFAULT_API_BASE_URL
    digest_times: tuple[str, ...] = DEFAULT_DIGEST_TIMES

    @property
    def enabled(self) -> bool:
        return bool(self.token)

    @property
    def base_url(self) -> str:
        return f"{self.api_base_url.rstrip('/')}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self.api_base_url.rstrip('/')}/file/bot"

    def check(self) -> TelegramSettings:
        """Fail fast when Telegram is on but the chat or the allow list is missing."""
        if not self.enabled:
            return self
        if self.chat_id is None:
            raise ConfigError("TELEGRAM_BOT_TOKEN is set but TELEGRAM_CHAT_ID is missing: "
                              "set the chat where approvals go (a number, negative for groups)")
        if not self.allowed_user_ids:
            raise ConfigError("TELEGRAM_BOT_TOKEN is set but TELEGRAM_ALLOWED_USER_IDS is "
                              "missing: list the Telegram user ids who may decide, comma-separated")
        return self


def load(section: Mapping[str, Any] | None, env: Mapping[str, str]) -> TelegramSettings:
    """Settings from the config file's `[telegram]` section with the environment winning."""
    merged: dict[str, Any] = dict(section or {})
    for key, var in _ENV.items():
        if env.get(var, "").strip():
            merged[key] = env[var].strip()
    if unknown := set(merged) - set(_ENV) - {"token"}:
        raise ConfigError(f"unknown [telegram] setting: {', '.join(sorted(unknown))}")
    if "token" in merged:
        raise ConfigError("[telegram] token must not be in the config file; "
                          "set TELEGRAM_BOT_TOKEN in the environment")
    return TelegramSettings(
        token=env.get("TELEGRAM_BOT_TOKEN", "").strip() or None,
        chat_id=parse_chat_id(merged.get("chat_id")),
        allowed_user_ids=parse_user_ids(merged.get("allowed_user_ids")),
        api_base_url=parse_url(merged.get("api_base_url", DEFAULT_API_BASE_URL)),
        digest_times=parse_times(merged.get("digest_times", DEFAULT_DIGEST_TIMES)),
    ).check()


def parse_chat_id(value: Any) -> int | None:
    """A chat id: an integer (groups are negative)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ConfigError(f"TELEGRAM_CHAT_ID must be a number, not {value!r}")
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(f"TELEGRAM_CHAT_ID must be a number such as -1001234567890, "
                          f"not {value!r}") from None


def parse_user_ids(value: Any) -> frozenset[int]:
    """User ids from `1,2,3` or a list of numbers."""
    if value is None or value == "":
        return frozenset()
    items: Iterable[Any] = value.split(",") if isinstance(value, str) else value
    out = set()
    for item in items:
        text = str(item).strip()
        if not text.isdigit():
            raise ConfigError(f"TELEGRAM_ALLOWED_USER_IDS must be positive numbers separated "
                              f"by commas; {text!r} is not one")
        out.add(int(text))
    return frozenset(out)


def parse_url(value: Any) -> str:
    """The Bot API server's root, http(s)://host[:port]."""
    text = str(value).strip().rstrip("/")
    if not re.match(r"^https?://[^/\s]+", text):
        raise ConfigError(f"TELEGRAM_API_BASE_URL must be an http(s) URL, not {value!r}")
    return text


def parse_times(value: Any) -> tuple[str, ...]:
    """Digest times as HH:MM, from `09:00,18:00` or a list."""
    items = value.split(",") if isinstance(value, str) else list(value)
    times = tuple(str(t).strip() for t in items if str(t).strip())
    for t in times:
        if not _TIME.match(t):
            raise ConfigError(f"TELEGRAM_DIGEST_TIMES must be HH:MM times, not {t!r}")
    return times


def from_config(section: Any, digest_times: Iterable[str] = DEFAULT_DIGEST_TIMES
                ) -> TelegramSettings:
    """Settings from the service config's parsed `[telegram]` (taskqueue.config.TelegramConfig)."""
    return TelegramSettings(
        token=getattr(section, "token", None) or None,
        chat_id=parse_chat_id(getattr(section, "chat_id", None)),
        allowed_user_ids=parse_user_ids(list(getattr(section, "allowed_user_ids", ()) or ())),
        api_base_url=parse_url(getattr(section, "api_base_url", None) or DEFAULT_API_BASE_URL),
        digest_times=parse_times(tuple(digest_times)),
    ).check()
