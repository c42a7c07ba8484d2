"""The benchmark's own database (dropped, created and migrated) and the machine it runs on."""

from __future__ import annotations

import os
import platform
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from psycopg import sql

from bench.measure import execute
from taskqueue import migrate

ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
_PROTECTED = {"postgres", "template0", "template1"}


def dsn_for(admin_dsn: str, name: str) -> str:
    """The admin DSN pointed at database `name`."""
    return psycopg.conninfo.make_conninfo(admin_dsn, dbname=name)


async def database_drop(admin_dsn: str, name: str) -> None:
    """Drop database `name` if it exists, disconnecting whoever is on it."""
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    await execute(admin_dsn, drop)


async def database_create(admin_dsn: str, name: str) -> str:
    """Drop and recreate the benchmark's database, migrate it, and return its DSN."""
    admin_db = psycopg.conninfo.conninfo_to_dict(admin_dsn).get("dbname")
    if name in _PROTECTED or name == admin_db:
        raise SystemExit(f"refusing to drop and recreate database {name!r}")
    await database_drop(admin_dsn, name)
    await execute(admin_dsn, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = dsn_for(admin_dsn, name)
    await migrate(dsn)
    return dsn


def machine_load() -> list[float]:
    """The 1, 5 and 15-minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


async def machine_info(dsn: str) -> dict[str, Any]:
    """The client machine and the server's settings that move the figures."""
    server = await execute(dsn, """
        SELECT current_setting('server_version') AS postgres,
               current_setting('shared_buffers') AS shared_buffers,
               current_setting('synchronous_commit') AS synchronous_commit,
               current_setting('max_connections') AS max_connections""")
    return {"cores": os.cpu_count(), "load_average": machine_load(),
            "platform": platform.platform(), "python": platform.python_version(),
            "psycopg": psycopg.__version__, **server}


async def in_own_database(admin_dsn: str, name: str, keep: bool,
                          measure: Callable[[str], Awaitable[dict[str, Any]]]
                          ) -> dict[str, Any]:
    """Create (or recreate) database `name`, run `measure` on its DSN and drop the database
    afterwards, even when the measurement failed, unless `keep`."""
    dsn = await database_create(admin_dsn, name)
    try:
        return await measure(dsn)
    finally:
        if not keep:
            await database_drop(admin_dsn, name)
