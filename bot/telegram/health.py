"""The Telegram channel's health for /healthz: every Bot API request reports its outcome.

PTB's polling loop gives up for good on a 401 (InvalidToken); a token revoked while the
service runs, or an API that answers 401 for a while, would end polling without a word. So
a 401 to getUpdates reaches PTB as a NetworkError: its loop keeps retrying with backoff, and
the channel reports the refusal, which /healthz shows at once.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram.error import NetworkError
from telegram.request import HTTPXRequest

from taskqueue import ChannelHealth

log = logging.getLogger("signoff.telegram")

UNAUTHORIZED = 401


class ReportingRequest(HTTPXRequest):
    """HTTPXRequest that tells `health` how each request went."""

    def __init__(self, health: ChannelHealth, *, retry_unauthorized: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.health = health
        self.retry_unauthorized = retry_unauthorized

    async def do_request(self, url: str, method: str, *args: Any,
                         **kwargs: Any) -> tuple[int, bytes]:
        try:
            code, payload = await super().do_request(url, method, *args, **kwargs)
        except Exception as exc:  # no answer: a network error, a timeout
            self.health.unreachable(f"{type(exc).__name__}: {exc}")
            raise
        if code == UNAUTHORIZED:
            self.health.refused("the Bot API answers 401 Unauthorized (check "
                                "TELEGRAM_BOT_TOKEN)")
            if self.retry_unauthorized:
                raise NetworkError("Unauthorized (401); retrying")
        elif code >= 500:
            self.health.unreachable(f"the Bot API answers {code}")
        else:
            failing_for = self.health.failing_for
            self.health.answered()
            if failing_for:
                log.info("telegram: the Bot API answers again (after %.0fs)", failing_for)
        return code, payload
