"""Where the database is (DATABASE_URL or the embedded server), whether it answers (and is
a PostgreSQL Signoff supports), and the pool's check of a connection before lending it."""

from __future__ import annotations

import os
import select
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import ConnStatus, TransactionStatus
from psycopg.rows import dict_row

from taskqueue.errors import DatabaseUnavailable, ServerTooOld, host_failures, one_line
from taskqueue.redact import secret_register_dsn
from taskqueue.store import pooler

# The oldest PostgreSQL Signoff runs on (docs/deployment.md, "Supported PostgreSQL").
MIN_SERVER_VERSION = 150000


def resolve_dsn() -> str:
    """DATABASE_URL when set (its password registered as a secret); otherwise start the
    embedded server and use it."""
    if dsn := os.environ.get("DATABASE_URL"):
        secret_register_dsn(dsn)
        return dsn
    from taskqueue.embedded import server as embedded

    return embedded.start()


def describe(dsn: str) -> str:
    """The server's address for messages: host:port, or the socket folder."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "(an unparsable DATABASE_URL)"
    hosts = str(info.get("host") or "localhost").split(",")
    ports = str(info.get("port") or "5432").split(",")
    ports += [ports[-1]] * (len(hosts) - len(ports))  # libpq: one port serves every host
    return ", ".join(f"socket {h} port {p}" if h.startswith("/") else f"{h}:{p}"
                     for h, p in zip(hosts, ports, strict=False))


async def check_reachable(dsn: str, timeout: int = 5) -> None:
    """Connect once, so an unreachable server is one clear error naming host and port
    (never the password: it is registered as a secret first)."""
    conn = await connect_checked(dsn, timeout)
    await conn.close()


async def connect_checked(dsn: str, timeout: int = 5, **kwargs: Any
                          ) -> psycopg.AsyncConnection[Any]:
    """A connection to `dsn` (made with `kwargs`) to a server Signoff supports, with whether
    it goes through a pooler noted; an unreachable server is one clear error naming host and
    port (never the password: it is registered as a secret first)."""
    secret_register_dsn(dsn)
    try:
        conn = await psycopg.AsyncConnection.connect(dsn, connect_timeout=timeout, **kwargs)
    except psycopg.OperationalError as exc:
        if attempts := host_failures(str(exc)):
            # Every host tried, once each: "the primary refused" is the news, not only
            # that the standby is read-only.
            raise DatabaseUnavailable("cannot connect to the database at any of its hosts: "
                                      + "; ".join(f"{where}: {why}" for where, why in attempts)
                                      ) from None
        reason = one_line(exc).rsplit(": ", 1)[-1].strip()
        raise DatabaseUnavailable(
            f"cannot connect to the database at {describe(dsn)}: {reason}") from None
    except psycopg.ProgrammingError as exc:
        raise DatabaseUnavailable(f"DATABASE_URL is not a valid connection string: {exc}") from None
    try:
        number = conn.info.server_version
        check_server_version(number, describe(dsn))
        await pooler.detect(conn, dsn)
    except BaseException:
        await conn.close()
        raise
    return conn


def connection_kwargs(dsn: str) -> dict[str, Any]:
    """How every connection a part of the queue calls on is made, pooled or alone: in
    autocommit (each call opens its own transaction), with dict rows, and without prepared
    statements when `dsn` goes through a pooler (known once a connection to it was checked:
    connect_checked)."""
    return {"autocommit": True, "row_factory": dict_row, **pooler.pool_kwargs(dsn)}


def version_text(number: int) -> str:
    """A server_version_num as people write it: 150004 -> 15.4 (90624 -> 9.6)."""
    if number < 100000:
        return f"{number // 10000}.{number // 100 % 100}"
    return f"{number // 10000}.{number % 10000}"


def check_server_version(number: int, where: str) -> None:
    """ServerTooOld, in one line naming both versions, below MIN_SERVER_VERSION."""
    if number < MIN_SERVER_VERSION:
        raise ServerTooOld(
            f"the PostgreSQL server at {where} is version {version_text(number)}; Signoff "
            f"needs PostgreSQL {MIN_SERVER_VERSION // 10000} or newer")


async def check_pooled(conn: psycopg.AsyncConnection[Any]) -> None:
    """The pool's check before it lends a connection, without a round trip when it can.

    An idle connection in autocommit has nothing to read: if its socket is readable, the
    server said something (a FATAL after pg_terminate_backend or a restart, an EOF), and
    the full check (an empty query) runs and lets the pool replace a dead connection. A
    quiet socket is lent as it is, saving a round trip on every call (psycopg_pool's own
    check costs one each time)."""
    pgconn = conn.pgconn
    if (pgconn.status == ConnStatus.OK and pgconn.transaction_status == TransactionStatus.IDLE
            and not _readable(pgconn.socket)):
        return
    from psycopg_pool import AsyncConnectionPool  # a pool's own check: the pool is loaded

    await AsyncConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    try:
        ready, _, _ = select.select([fd], [], [], 0)
    except (OSError, ValueError):
        return True  # a closed socket: let the full check say so
    return bool(ready)
