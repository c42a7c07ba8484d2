"""The benchmark's own database (dropped, created and migrated) and the machine it runs on."""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from bench.measure import execute
from taskqueue import migrate

ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
_PROTECTED = {"postgres", "template0", "template1"}


def database_options(parser: argparse.ArgumentParser, default: str) -> None:
    """--dsn, --database (default `default`) and --keep: what every benchmark that works
    in a database of its own takes."""
    parser.add_argument("--dsn", default=ADMIN_DSN,
                        help="admin DSN used to create the database")
    parser.add_argument("--database", default=default, help="dropped and recreated")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")


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


async def run_in_own_database(title: str, module: str, argv: Sequence[str],
                              args: argparse.Namespace,
                              figure: Callable[[str], Awaitable[dict[str, Any]]]
                              ) -> dict[str, Any]:
    """A benchmark module's JSON document: `figure` measured in its own database
    (`args.dsn`, `args.database`, `args.keep`), with the machine, the load at the start and
    the end, the command that ran it and how long it took."""
    started = time.perf_counter()

    async def measure(dsn: str) -> dict[str, Any]:
        machine = await machine_info(dsn)
        found = await figure(dsn)
        machine["load_average_end"] = machine_load()
        return {"machine": machine, **found}

    doc = await in_own_database(args.dsn, args.database, args.keep, measure)
    return {"benchmark": title, "command": shlex.join(["python", "-m", module, *argv]),
            "database": args.database, **doc,
            "seconds": round(time.perf_counter() - started, 1)}
