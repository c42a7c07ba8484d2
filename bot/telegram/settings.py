"""TelegramSettings: what the bot needs (parsed from `[telegram]` and TELEGRAM_* by
bot/telegram/config.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from taskqueue import ConfigError

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
