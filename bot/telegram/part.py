"""Plugs the bot into the service: settings from its config, checks on its scheduler."""

from __future__ import annotations

from typing import Any

from bot.telegram.app import TelegramBot, telegram_bot
from bot.telegram.settings import from_config


def create_part(service: Any) -> TelegramBot | None:
    """The TelegramBot for `service` (a bot.service.Service), or None when Telegram is off.

    Raises ConfigError when the token is set but the chat id or the allow list is missing
    or malformed; `start()` raises it when Telegram rejects the token.
    """
    config = service.config
    bot = telegram_bot(from_config(config.telegram, config.digest_times), service.queue,
                       signal_config=config.signals,
                       digest_max_items=config.telegram.digest_max_items)
    if bot is None:
        return None
    if service.scheduler is not None:
        if config.telegram.digest:
            service.scheduler.set_check("nudge_digest", bot.nudge_digest().run_once)
        service.scheduler.set_check("incident_check", bot.incident_alert().run_once)
    return bot
