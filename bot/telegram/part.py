"""Plugs the bot into the service: settings from its config, the digest on its scheduler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.extras import TELEGRAM, require_telegram
from bot.telegram.config import from_config
from taskqueue import ConfigError, extra_missing

if TYPE_CHECKING:
    from bot.telegram.app import TelegramBot


def create_part(service: Any, **options: Any) -> TelegramBot | None:
    """The TelegramBot for `service` (a bot.service.Service), or None when Telegram is off;
    `options` go to TelegramBot (tests shorten `reconnect` and `unreachable_after`).

    Raises ConfigError when the token is set but the chat id or the allow list is missing
    or malformed; `start()` raises it when Telegram rejects the token.
    """
    settings = from_config(service.config)
    if not settings.enabled and extra_missing(*TELEGRAM) is not None:
        return None  # off, and not installed either: the service says "telegram: off"
    require_telegram()
    from bot.telegram.app import telegram_bot

    bot = telegram_bot(settings, service.queue, signal_config=service.config.signals,
                       digest_max_items=settings.digest_max_items, **options)
    if bot is None:
        return None
    if service.scheduler is not None and settings.digest:
        service.scheduler.set_check("nudge_digest", bot.nudge_digest().run_once,
                                    times=settings.digest_times)
    return bot


def check_settings(config: Any) -> None:
    """The `[telegram]` table and TELEGRAM_* variables, and that the webhook address can be
    bound: ConfigError now, before the service writes anything (the token itself is only
    checked by Telegram, when the part starts)."""
    settings = from_config(config)
    if settings.enabled:
        require_telegram()
    if not (settings.enabled and settings.webhook):
        return
    from bot.telegram.app import check_listen

    try:
        check_listen(settings.webhook_listen, settings.webhook_port)
    except OSError as exc:
        raise ConfigError(f"cannot listen for the Telegram webhook on {settings.webhook_listen}:"
                          f"{settings.webhook_port} ({exc.strerror or exc}); check "
                          "TELEGRAM_WEBHOOK_LISTEN and TELEGRAM_WEBHOOK_PORT") from None
