"""How soon the connection pool tries again while the server is away: every second at most,
so a server that comes back (a restart, a standby promoted late) is used within a second.

psycopg_pool waits from 1 s doubling between attempts to replace a lost connection, and
between checks that found a dead one; after an 8 s outage its next attempt came 5.6 s after
the standby's promotion. Both waits come from its AttemptWithBackoff, looked up by name in
psycopg_pool.pool_async each time, so Signoff's pools use CappedAttempt instead: the same
doubling from RECONNECT_MIN, capped at RECONNECT_MAX with a little jitter (many processes do
not reconnect in step). A refused connection costs the server next to nothing."""

from __future__ import annotations

import random

import psycopg_pool.pool_async as _pool_async
from psycopg_pool.base import AttemptWithBackoff

RECONNECT_MIN = 0.25
RECONNECT_MAX = 1.0


class CappedAttempt(AttemptWithBackoff):
    """psycopg_pool's backoff, from RECONNECT_MIN, never longer than RECONNECT_MAX."""

    INITIAL_DELAY = RECONNECT_MIN

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_MAX * random.uniform(0.8, 1.0))


def install() -> None:
    """Make the async pools of this process use CappedAttempt (idempotent)."""
    _pool_async.AttemptWithBackoff = CappedAttempt  # type: ignore[misc]
