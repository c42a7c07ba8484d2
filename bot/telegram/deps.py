"""What every handler needs (queue, settings, courier, sender), kept in the app's bot_data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from telegram import User
from telegram.ext import ContextTypes

from bot.telegram.config import TelegramSettings
from bot.telegram.courier import Courier
from bot.telegram.delivery import TelegramChannel
from taskqueue import SignalConfig
from taskqueue.queues.channel import ChannelQueue
from taskqueue.queues.operator import OperatorQueue

KEY = "signoff"


@dataclass
class Deps:
    """The bot's resources; `revising` maps (chat id, user id) to the approval owed a note.

    `queue` is what the chat decides, reads and redelivers with (people's part and the
    outbox); `operator` is the same queue for /retry and /cancel, an operator's moves."""

    queue: ChannelQueue
    operator: OperatorQueue
    settings: TelegramSettings
    courier: Courier
    sender: TelegramChannel
    signal_config: SignalConfig | None = None
    revising: dict[tuple[int, int], int] = field(default_factory=dict)

    def allowed(self, user: User | None) -> bool:
        return user is not None and user.id in self.settings.allowed_user_ids

    def who(self, user: User) -> str:
        return who(user, self.settings.people)


def deps(context: ContextTypes.DEFAULT_TYPE) -> Deps:
    """The Deps stored when the application was built."""
    found: Any = context.bot_data[KEY]
    assert isinstance(found, Deps)
    return found


def who(user: User, people: Mapping[int, str] | None = None) -> str:
    """How a decision records its Telegram decider: the person's name from `[people.NAME]`,
    else `telegram:<id>:<name>`."""
    name = (people or {}).get(user.id)
    return name if name else f"telegram:{user.id}:{user.full_name}"
