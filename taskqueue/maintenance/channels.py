"""Delivery channels' health as their owners report it, for /healthz.

A channel (the user's code that delivers notifications: a chat bot, a web inbox) reports each
exchange with its far end: `answered()` when it answered, `refused(reason)` when it answered
but refuses us (bad credentials: failing at once), `unreachable(reason)` when there was no
answer (failing once that has lasted `unreachable_after` seconds, so a blip is not an
incident). ObservabilityServer.add_channel() puts the channel among /healthz's checks,
under its name.
"""

from __future__ import annotations

import time
from typing import Protocol

from taskqueue.redact import redact

# How long a channel may go without an answer before /healthz fails (seconds).
UNREACHABLE_AFTER = 60.0


class ChannelReport(Protocol):
    """What /healthz reads of a channel: its name and what is wrong (None: all is well)."""

    name: str

    def problem(self) -> str | None: ...


class ChannelHealth:
    """A channel's state from the reports of its exchanges (see the module's docstring)."""

    def __init__(self, name: str, *, unreachable_after: float = UNREACHABLE_AFTER) -> None:
        self.name = name
        self.unreachable_after = unreachable_after
        self.answered_once = False
        self._refused: str | None = None
        self._failing_since: float | None = None
        self._reason = ""

    def answered(self) -> None:
        """The far end answered: the channel is healthy again."""
        self.answered_once = True
        self._refused = None
        self._failing_since = None

    def refused(self, reason: str) -> None:
        """The far end answered but refuses us (unauthorized): failing at once."""
        self._refused = redact(reason)
        if self._failing_since is None:
            self._failing_since = time.monotonic()

    def unreachable(self, reason: str) -> None:
        """No answer (connection refused, timeout, a 5xx): failing once it lasts."""
        self._reason = redact(reason)
        if self._failing_since is None:
            self._failing_since = time.monotonic()

    @property
    def failing_for(self) -> float:
        """Seconds since the first failure after the last answer (0 when healthy)."""
        since = self._failing_since
        return 0.0 if since is None else time.monotonic() - since

    def problem(self) -> str | None:
        if self._refused is not None:
            return f"{self.name} refuses us: {self._refused}; retrying"
        if self._failing_since is None or self.failing_for < self.unreachable_after:
            return None
        return (f"{self.name} unreachable for {self.failing_for:.0f}s ({self._reason}); "
                "retrying")
