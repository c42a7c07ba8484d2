"""Telegram settings: the `[telegram]` config section, overridden by TELEGRAM_* variables."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from taskqueue import ConfigError

DEFAULT_API_BASE_URL = "https://api.telegram.org"
DEFAULT_DIGEST_TIMES = ("09:00", "18:00")
DEFAULT_WEBHOOK_LISTEN = "127.0.0.1"
DEFAULT_WEBHOOK_PORT = 8443
DEFAULT_WEBHOOK_PATH = "telegram"
_TIME = re.compile(r"^([01]?[0-9]|2[0-3]):([0-5][0-9])$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")  # what Telegram accepts as a secret_token
_ENV = {
    "chat_id": "TELEGRAM_CHAT_ID",
    "allowed_user_ids": "TELEGRAM_ALLOWED_USER_IDS",
    "api_base_url": "TELEGRAM_API_BASE_URL",
    "digest_times": "TELEGRAM_DIGEST_TIMES",
    "webhook_url": "TELEGRAM_WEBHOOK_URL",
    "webhook_listen": "TELEGRAM_WEBHOOK_LISTEN",
    "webhook_port": "TELEGRAM_WEBHOOK_PORT",
}
_FILE_ONLY = {"webhook_path"}
# Keys someone might put in the file for a secret, and the variable to use instead.
_SECRETS = {"token": "TELEGRAM_BOT_TOKEN", "bot_token": "TELEGRAM_BOT_TOKEN",
            "webhook_secret": "TELEGRAM_WEBHOOK_SECRET", "secret_token": "TELEGRAM_WEBHOOK_SECRET",
            "webhook_secret_token": "TELEGRAM_WEBHOOK_SECRET"}


@dataclass(frozen=True)
class TelegramSettings:
    """Where approvals go and who may decide. No token means Telegram is off.

    Updates come by long polling unless `webhook_url` is set: then Telegram posts them to
    that public URL, which a reverse proxy forwards to `webhook_listen:webhook_port`."""

    token: str | None = None
    chat_id: int | None = None
    allowed_user_ids: frozenset[int] = frozenset()
    api_base_url: str = DEFAULT_API_BASE_URL
    digest_times: tuple[str, ...] = DEFAULT_DIGEST_TIMES
    webhook_url: str | None = None
    webhook_listen: str = DEFAULT_WEBHOOK_LISTEN
    webhook_port: int = DEFAULT_WEBHOOK_PORT
    webhook_path: str | None = None  # None: the URL's path, else "telegram"
    webhook_secret: str | None = None  # None: a random one at each start

    @property
    def enabled(self) -> bool:
        return bool(self.token)

    @property
    def webhook(self) -> bool:
        """Webhook mode (else long polling)."""
        return bool(self.webhook_url)

    @property
    def url_path(self) -> str:
        """The path the webhook listener serves, without slashes at either end."""
        if self.webhook_path:
            return self.webhook_path.strip("/")
        return urlsplit(self.webhook_url or "").path.strip("/") or DEFAULT_WEBHOOK_PATH

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
    for key in sorted(set(_SECRETS) & set(merged)):
        raise ConfigError(f"[telegram] {key} must not be in the config file; "
                          f"set {_SECRETS[key]} in the environment")
    for key, var in _ENV.items():
        if env.get(var, "").strip():
            merged[key] = env[var].strip()
    if unknown := set(merged) - set(_ENV) - _FILE_ONLY:
        raise ConfigError(f"unknown [telegram] setting: {', '.join(sorted(unknown))}")
    return TelegramSettings(
        token=env.get("TELEGRAM_BOT_TOKEN", "").strip() or None,
        chat_id=parse_chat_id(merged.get("chat_id")),
        allowed_user_ids=parse_user_ids(merged.get("allowed_user_ids")),
        api_base_url=parse_url(merged.get("api_base_url", DEFAULT_API_BASE_URL)),
        digest_times=parse_times(merged.get("digest_times", DEFAULT_DIGEST_TIMES)),
        **parse_webhook(merged, env.get("TELEGRAM_WEBHOOK_SECRET")),
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


def parse_webhook(values: Mapping[str, Any], secret: str | None) -> dict[str, Any]:
    """Webhook settings from `webhook_url`, `_listen`, `_port`, `_path` and the secret."""
    return {
        "webhook_url": parse_webhook_url(values.get("webhook_url")),
        "webhook_listen": parse_listen(values.get("webhook_listen")),
        "webhook_port": parse_port(values.get("webhook_port")),
        "webhook_path": parse_path(values.get("webhook_path")),
        "webhook_secret": parse_secret(secret),
    }


def parse_webhook_url(value: Any) -> str | None:
    """The public http(s) URL Telegram posts updates to; None means long polling."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in text:
        raise ConfigError("TELEGRAM_WEBHOOK_URL ([telegram] webhook_url) must be an http(s) "
                          f"URL such as https://bot.example.com/telegram, not {value!r}")
    return text


def parse_listen(value: Any) -> str:
    """The address the webhook listener binds, 127.0.0.1 by default (behind a proxy)."""
    text = DEFAULT_WEBHOOK_LISTEN if value is None else str(value).strip()
    if not text or any(ch.isspace() for ch in text):
        raise ConfigError("TELEGRAM_WEBHOOK_LISTEN ([telegram] webhook_listen) must be an "
                          f"address such as 127.0.0.1 or 0.0.0.0, not {value!r}")
    return text


def parse_port(value: Any) -> int:
    """The webhook listener's TCP port, 1-65535 (8443 by default)."""
    if value is None:
        return DEFAULT_WEBHOOK_PORT
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ConfigError("TELEGRAM_WEBHOOK_PORT ([telegram] webhook_port) must be a TCP port, "
                          f"1-65535, not {value!r}")
    return int(text)


def parse_path(value: Any) -> str | None:
    """The listener's URL path; None derives it from the webhook URL."""
    if value is None:
        return None
    text = str(value).strip().strip("/")
    if not text or any(ch.isspace() for ch in text):
        raise ConfigError(f'[telegram] webhook_path must be a URL path such as "telegram", '
                          f"not {value!r}")
    return text


def parse_secret(value: str | None) -> str | None:
    """TELEGRAM_WEBHOOK_SECRET, checked against what Telegram accepts; None: generate one."""
    text = (value or "").strip()
    if text and not _SECRET.match(text):
        raise ConfigError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, "
                          "_ and - (what Telegram accepts as a secret_token)")
    return text or None


def from_config(section: Any, digest_times: Iterable[str] = DEFAULT_DIGEST_TIMES
                ) -> TelegramSettings:
    """Settings from the service config's parsed `[telegram]` (taskqueue.config.TelegramConfig)."""
    webhook = {key: getattr(section, key, None)
               for key in ("webhook_url", "webhook_listen", "webhook_port", "webhook_path")}
    return TelegramSettings(
        token=getattr(section, "token", None) or None,
        chat_id=parse_chat_id(getattr(section, "chat_id", None)),
        allowed_user_ids=parse_user_ids(list(getattr(section, "allowed_user_ids", ()) or ())),
        api_base_url=parse_url(getattr(section, "api_base_url", None) or DEFAULT_API_BASE_URL),
        digest_times=parse_times(tuple(digest_times)),
        **parse_webhook(webhook, getattr(section, "webhook_secret", None)),
    ).check()
