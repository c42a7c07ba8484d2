"""The `[telegram]` table: TelegramSettings (what the bot needs) and how it is read from the
service's config file and the TELEGRAM_* variables over it, checked key by key (errors name
the key and its line).

The core keeps this table unparsed (`Config.sections["telegram"]`); the token only ever
comes from TELEGRAM_BOT_TOKEN, the webhook secret only from TELEGRAM_WEBHOOK_SECRET."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from bot.people import people_from_config
from taskqueue import Config, ConfigChecker, ConfigError, secret_register

DEFAULT_API_BASE_URL = "https://api.telegram.org"
DEFAULT_DIGEST_TIMES = ("09:00", "18:00")
DEFAULT_WEBHOOK_LISTEN = "127.0.0.1"
DEFAULT_WEBHOOK_PORT = 8443
DEFAULT_WEBHOOK_PATH = "telegram"


@dataclass(frozen=True)
class TelegramSettings:
    """Where approvals go and who may decide. No token means Telegram is off.

    Updates come by long polling unless `webhook_url` is set: then Telegram posts them to
    that public URL, which a reverse proxy forwards to `webhook_listen:webhook_port`."""

    token: str | None = None
    chat_id: int | None = None
    allowed_user_ids: frozenset[int] = frozenset()
    api_base_url: str = DEFAULT_API_BASE_URL
    digest: bool = True
    digest_max_items: int = 10
    digest_times: tuple[str, ...] = DEFAULT_DIGEST_TIMES
    webhook_url: str | None = None
    webhook_listen: str = DEFAULT_WEBHOOK_LISTEN
    webhook_port: int = DEFAULT_WEBHOOK_PORT
    webhook_path: str | None = None  # None: the URL's path, else "telegram"
    webhook_secret: str | None = None  # None: derived from the token (webhook.py)
    # [people.NAME] telegram_user_id: the person's name a decision records (bot/people.py).
    people: Mapping[int, str] = field(default_factory=dict, hash=False, compare=False)

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


KeyPath = tuple[str | int, ...]
_KEYS = {"chat_id", "allowed_user_ids", "api_base_url", "digest", "digest_max_items",
         "digest_times", "webhook_url", "webhook_listen", "webhook_port", "webhook_path"}
# Secrets never go in the file: each key someone might try, and the variable to use instead.
_SECRETS = {"token": "TELEGRAM_BOT_TOKEN", "bot_token": "TELEGRAM_BOT_TOKEN",
            "webhook_secret": "TELEGRAM_WEBHOOK_SECRET", "secret_token": "TELEGRAM_WEBHOOK_SECRET",
            "webhook_secret_token": "TELEGRAM_WEBHOOK_SECRET"}
# What Telegram accepts as a webhook's secret_token.
_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
TIME_RE = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def from_config(config: Config, env: Mapping[str, str] | None = None) -> TelegramSettings:
    """Settings from the service config's `[telegram]` table, the environment winning;
    digest times default to the file's `[nudges] digest_times`."""
    env = os.environ if env is None else env
    people = people_from_config(config)
    return parse({"telegram": config.sections.get("telegram", {})}, config.checker(), env,
                 config.digest_times,
                 {p.telegram_user_id: p.name for p in people.by_name.values()
                  if p.telegram_user_id is not None})


def load(section: Mapping[str, Any] | None, env: Mapping[str, str] | None = None
         ) -> TelegramSettings:
    """Settings from a `[telegram]` table given as a mapping (no file), checked the same way."""
    env = os.environ if env is None else env
    top = {"telegram": dict(section)} if section is not None else {}
    return parse(top, ConfigChecker("", None), env, DEFAULT_DIGEST_TIMES)


def parse(top: Mapping[str, Any], c: ConfigChecker, env: Mapping[str, str],
          digest_times: tuple[str, ...], people: Mapping[int, str] | None = None
          ) -> TelegramSettings:
    """The [telegram] section, then TELEGRAM_CHAT_ID, TELEGRAM_ALLOWED_USER_IDS,
    TELEGRAM_API_BASE_URL, TELEGRAM_DIGEST_TIMES and TELEGRAM_WEBHOOK_URL/_LISTEN/_PORT
    over it. `people` (user id → name, from `[people.NAME]`) are allowed too."""
    people = dict(people or {})
    # Masked in every log line, error and message of the process from here on.
    secret_register(env.get("TELEGRAM_BOT_TOKEN"), env.get("TELEGRAM_WEBHOOK_SECRET"))
    raw = top.get("telegram", {})
    if not isinstance(raw, Mapping):
        raise c.error(("telegram",), "must be a table")
    for secret in sorted(set(_SECRETS) & set(raw)):
        raise c.error(("telegram", secret), "secrets never go in the file; "
                      f"set the {_SECRETS[secret]} environment variable")
    t = c.table(top, ("telegram",), _KEYS)
    k: KeyPath = ("telegram",)
    return TelegramSettings(
        token=env.get("TELEGRAM_BOT_TOKEN") or None,
        chat_id=_env_chat(env) if env.get("TELEGRAM_CHAT_ID")
        else c.get(t, (*k, "chat_id"), "chat"),
        allowed_user_ids=frozenset(_env_ids(env) if env.get("TELEGRAM_ALLOWED_USER_IDS")
                                   else _file_ids(t, c)) | frozenset(people),
        people=people,
        api_base_url=(_api_base_url(t, c, env) or DEFAULT_API_BASE_URL).rstrip("/"),
        digest=c.get(t, (*k, "digest"), "bool", True),
        digest_max_items=c.get(t, (*k, "digest_max_items"), "int", 10, 1, 1000),
        digest_times=_env_times(env) if env.get("TELEGRAM_DIGEST_TIMES")
        else c.get(t, (*k, "digest_times"), "times", digest_times),
        **_webhook(t, c, env),
    ).check()


def _webhook(t: Mapping[str, Any], c: ConfigChecker, env: Mapping[str, str]) -> dict[str, Any]:
    """Webhook mode's settings (it is on when webhook_url is set) and the secret from the env."""
    secret = env.get("TELEGRAM_WEBHOOK_SECRET", "").strip() or None
    if secret is not None and not _SECRET_RE.match(secret):
        raise ConfigError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, "
                          "_ and - (what Telegram accepts as a secret_token)")
    return {"webhook_url": _webhook_url(t, c, env),
            "webhook_listen": _webhook_listen(t, c, env),
            "webhook_port": _env_port(env) if env.get("TELEGRAM_WEBHOOK_PORT", "").strip()
            else _file_port(t, c),
            "webhook_path": _webhook_path(t, c),
            "webhook_secret": secret}


def _webhook_url(t: Mapping[str, Any], c: ConfigChecker, env: Mapping[str, str]) -> str | None:
    hint = "must be an http(s) URL such as https://bot.example.com/telegram"
    if value := env.get("TELEGRAM_WEBHOOK_URL", "").strip():
        if not _is_http_url(value):
            raise ConfigError(f"TELEGRAM_WEBHOOK_URL {hint}, not {value!r}")
        return value
    key: KeyPath = ("telegram", "webhook_url")
    value = c.get(t, key, "str")
    if value is not None and not _is_http_url(value.strip()):
        raise c.error(key, f"{hint}, not {value!r}")
    return value.strip() if value else None


def _webhook_path(t: Mapping[str, Any], c: ConfigChecker) -> str | None:
    key: KeyPath = ("telegram", "webhook_path")
    value = c.get(t, key, "str")
    if value is not None and (not value.strip("/ ") or any(ch.isspace() for ch in value)):
        raise c.error(key, f"must be a URL path such as \"telegram\", not {value!r}")
    return value


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url


def _file_port(t: Mapping[str, Any], c: ConfigChecker) -> int:
    key: KeyPath = ("telegram", "webhook_port")
    port: int = c.get(t, key, "int", 8443)
    if not 1 <= port <= 65535:
        raise c.error(key, f"must be a TCP port, 1-65535, not {port}")
    return port


def _env_port(env: Mapping[str, str]) -> int:
    value = env["TELEGRAM_WEBHOOK_PORT"].strip()
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        raise ConfigError(f"TELEGRAM_WEBHOOK_PORT must be a TCP port, 1-65535, not {value!r}")
    return int(value)


def _env_chat(env: Mapping[str, str]) -> int:
    value = env["TELEGRAM_CHAT_ID"].strip()
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"TELEGRAM_CHAT_ID must be a number such as -1001234567890, "
                          f"not {value!r}") from None


def _env_ids(env: Mapping[str, str]) -> tuple[int, ...]:
    items = env["TELEGRAM_ALLOWED_USER_IDS"].replace(",", " ").split()
    for item in items:
        if not item.isdigit():
            raise ConfigError("TELEGRAM_ALLOWED_USER_IDS must be positive numbers separated "
                              f"by commas; {item!r} is not one")
    return tuple(int(item) for item in items)


def _file_ids(t: Mapping[str, Any], c: ConfigChecker) -> tuple[int, ...]:
    key: KeyPath = ("telegram", "allowed_user_ids")
    ids: tuple[int, ...] = c.get(t, key, "ints", ())
    if any(i <= 0 for i in ids):
        raise c.error(key, f"must be positive Telegram user ids, not {list(ids)}")
    return ids


def _api_base_url(t: Mapping[str, Any], c: ConfigChecker, env: Mapping[str, str]) -> str | None:
    hint = "must be an http(s) URL such as https://api.telegram.org"
    if value := env.get("TELEGRAM_API_BASE_URL", "").strip():
        if not _is_http_url(value):
            raise ConfigError(f"TELEGRAM_API_BASE_URL {hint}, not {value!r}")
        return value
    key: KeyPath = ("telegram", "api_base_url")
    value = c.get(t, key, "str")
    if value is not None and not _is_http_url(value.strip()):
        raise c.error(key, f"{hint}, not {value!r}")
    return value.strip() if value else None


def _webhook_listen(t: Mapping[str, Any], c: ConfigChecker, env: Mapping[str, str]) -> str:
    hint = "must be an address such as 127.0.0.1 or 0.0.0.0"
    if value := env.get("TELEGRAM_WEBHOOK_LISTEN", "").strip():
        if any(ch.isspace() for ch in value):
            raise ConfigError(f"TELEGRAM_WEBHOOK_LISTEN {hint}, not {value!r}")
        return value
    key: KeyPath = ("telegram", "webhook_listen")
    listen: str = c.get(t, key, "str", "127.0.0.1").strip()
    if any(ch.isspace() for ch in listen):
        raise c.error(key, f"{hint}, not {listen!r}")
    return listen


def _env_times(env: Mapping[str, str]) -> tuple[str, ...]:
    value = env["TELEGRAM_DIGEST_TIMES"]
    times = tuple(value.replace(",", " ").split())
    if not all(TIME_RE.match(t) for t in times):
        raise ConfigError(f"TELEGRAM_DIGEST_TIMES must be HH:MM times, comma-separated, "
                          f"not {value!r}")
    return times
