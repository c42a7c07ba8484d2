"""Where the database is (DATABASE_URL or the embedded server) and whether it answers."""

from __future__ import annotations

import os

import psycopg
from psycopg.conninfo import conninfo_to_dict

from taskqueue.errors import DatabaseUnavailable, one_line


def resolve_dsn() -> str:
    """DATABASE_URL when set; otherwise start the embedded server and use it."""
    if dsn := os.environ.get("DATABASE_URL"):
        return dsn
    from taskqueue.store import embedded

    return embedded.start()


def describe(dsn: str) -> str:
    """The server's address for messages: host:port, or the socket folder."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "(an unparsable DATABASE_URL)"
    host = str(info.get("host") or "localhost")
    port = str(info.get("port") or "5432")
    if host.startswith("/"):
        return f"socket {host} port {port}"
    return f"{host}:{port}"


async def check_reachable(dsn: str, timeout: int = 5) -> None:
    """Connect once, so an unreachable server is one clear error naming host and port."""
    try:
        conn = await psycopg.AsyncConnection.connect(dsn, connect_timeout=timeout)
    except psycopg.OperationalError as exc:
        reason = one_line(exc).rsplit(": ", 1)[-1].strip()
        raise DatabaseUnavailable(
            f"cannot connect to the database at {describe(dsn)}: {reason}") from None
    except psycopg.ProgrammingError as exc:
        raise DatabaseUnavailable(f"DATABASE_URL is not a valid connection string: {exc}") from None
    await conn.close()
