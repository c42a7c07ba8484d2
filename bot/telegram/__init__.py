"""The Telegram side of Signoff: approval messages with buttons, commands, digests and alerts."""

from __future__ import annotations

import os
from typing import Any

# Opt in to python-telegram-bot's timedelta durations now (RetryAfter.retry_after and
# friends); the int form warns on every access, even inside the library.
os.environ.setdefault("PTB_TIMEDELTA", "true")


def create_part(service: Any) -> Any:
    """The service's hook (bot/service.py): the Telegram part, or None when it is off."""
    from bot.telegram.part import create_part as create

    return create(service)
