"""Whether a connection string goes through a pooler in transaction mode (PgBouncer), and which
connection string holds what such a pooler cannot keep: LISTEN and session advisory locks.

Through a transaction pooler each transaction may run on another server connection, so:
prepared statements are off on pooled connections (PgBouncer before 1.21 cannot keep them);
LISTEN, the leader's lock and the migrations' lock use SIGNOFF_DIRECT_URL (the server
itself) when it is set; without it there is no LISTEN (workers and channels poll) and the
leader holds a lease row instead of a lock (runtime/leadership.py).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import psycopg

from taskqueue.errors import ConfigError
from taskqueue.redact import secret_register_dsn

log = logging.getLogger("signoff.pooler")

DIRECT_ENV = "SIGNOFF_DIRECT_URL"
# "transaction": DATABASE_URL goes through a transaction pooler; "none": it does not;
# "auto" (the default): a pooler is detected when the server's port is not the one dialled.
POOLER_ENV = "SIGNOFF_POOLER"
MODES = ("auto", "transaction", "none")

# What was detected per connection string (filled by `detect`, at connect).
_DETECTED: dict[str, bool] = {}
_SAID: set[str] = set()


def mode() -> str:
    """SIGNOFF_POOLER, checked: auto, transaction or none."""
    value = os.environ.get(POOLER_ENV, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ConfigError(f"{POOLER_ENV} must be one of {', '.join(MODES)}, not {value!r}")
    return value


def behind_pooler(dsn: str) -> bool:
    """Whether `dsn` goes through a transaction pooler (told, or detected at connect)."""
    told = mode()
    if told != "auto":
        return told == "transaction"
    return _DETECTED.get(dsn, False)


async def detect(conn: psycopg.AsyncConnection[Any], dsn: str) -> bool:
    """Note whether `conn` (made from `dsn`) reached the server through a pooler: PgBouncer
    listens on a port of its own, so the server's `port` is not the one dialled."""
    if mode() != "auto":
        return behind_pooler(dsn)
    cur = await conn.execute("SELECT current_setting('port')::int")
    row = await cur.fetchone()
    server_port = row[0] if isinstance(row, tuple) else next(iter(row.values()))  # type: ignore[union-attr]
    dialled = int(conn.info.port)
    _DETECTED[dsn] = pooled = server_port != dialled
    return pooled


def direct_url() -> str | None:
    """SIGNOFF_DIRECT_URL (its password registered as a secret), or None."""
    direct = os.environ.get(DIRECT_ENV, "").strip()
    if not direct:
        return None
    secret_register_dsn(direct)
    return direct


def session_dsn(dsn: str) -> str | None:
    """Where LISTEN and session locks go for `dsn`: `dsn` itself when it is not pooled, the
    direct URL when it is and one is set, None when neither (then: poll, and a lease)."""
    if not behind_pooler(dsn):
        return dsn
    return direct_url()


def pool_kwargs(dsn: str) -> dict[str, Any]:
    """Connection settings for statements on `dsn`: no prepared statements through a pooler."""
    return {"prepare_threshold": None} if behind_pooler(dsn) else {}


def say_once(dsn: str) -> None:
    """Log once per process and connection string how Signoff runs through the pooler."""
    if not behind_pooler(dsn) or dsn in _SAID:
        return
    _SAID.add(dsn)
    if direct_url():
        log.info("database: through a transaction pooler; LISTEN, the leader's lock and the "
                 "migrations' lock use %s", DIRECT_ENV)
    else:
        log.warning("database: through a transaction pooler without %s: no LISTEN, workers "
                    "and channels poll; the leader holds a lease row", DIRECT_ENV)
