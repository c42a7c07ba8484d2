"""The soak's autovacuum switch: the server's autovacuum turned on for a run with ALTER SYSTEM
and put back as it was afterwards, and the per-table counters that show it ran."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from bench.tables import VACUUMED

log = logging.getLogger("signoff.bench")

# Held on the switch's own connection for the whole run: two soaks that each turned the
# setting on and put it back could otherwise leave the server with the other's value.
LOCK_KEY = 0x5167_6E6F_6176  # "Signoff" + "av"
RELOAD_WAIT = 10.0  # seconds a reload may take to reach new connections

# Each setting's value (in its base unit), where it came from, and what ALTER SYSTEM had
# written before us (postgresql.auto.conf), which is what the run must put back.
_BEFORE = """
SELECT s.name, s.setting, s.source, s.sourcefile,
       (SELECT f.setting FROM pg_file_settings f
        WHERE f.name = s.name AND f.sourcefile LIKE '%%/postgresql.auto.conf'
        ORDER BY f.seqno DESC LIMIT 1) AS altered
FROM pg_settings s WHERE s.name = ANY(%(names)s)"""

_OTHERS = """
SELECT name, setting || coalesce(unit, '') AS value, source FROM pg_settings
WHERE name LIKE 'autovacuum\\_%' ORDER BY name"""

_STATS = """
SELECT relname, autovacuum_count, vacuum_count, n_dead_tup, n_live_tup, last_autovacuum
FROM pg_stat_user_tables WHERE relname = ANY(%(tables)s)"""


class AutovacuumBusy(SystemExit):
    """Another soak holds the server's autovacuum setting; run again when it is done."""


async def _read(conn: psycopg.AsyncConnection[Any], names: list[str]
                ) -> dict[str, dict[str, Any]]:
    rows = await (await conn.execute(_BEFORE, {"names": names})).fetchall()
    return {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in rows}


async def _seen(dsn: str, names: list[str]) -> dict[str, str]:
    """The settings as a new connection sees them (a reload reaches each backend alone)."""
    async with await psycopg.AsyncConnection.connect(
            dsn, autocommit=True, row_factory=dict_row) as conn:
        return {n: s["setting"] for n, s in (await _read(conn, names)).items()}


async def _reload_until(conn: psycopg.AsyncConnection[Any], dsn: str,
                        wanted: dict[str, str]) -> None:
    """Reload the configuration and wait until a new connection sees `wanted`."""
    await conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + RELOAD_WAIT
    while (seen := await _seen(dsn, list(wanted))) != wanted:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server has {seen}, not {wanted}, {RELOAD_WAIT:g} s "
                               "after a reload")
        await asyncio.sleep(0.05)


async def _put_back(conn: psycopg.AsyncConnection[Any], dsn: str,
                    before: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """ALTER SYSTEM as it was (RESET where it had no line for the setting), then reload."""
    for name, was in before.items():
        if was["altered"] is None:
            await conn.execute(sql.SQL("ALTER SYSTEM RESET {}").format(sql.Identifier(name)))
        else:
            await conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(
                sql.Identifier(name), sql.Literal(was["altered"])))
    await _reload_until(conn, dsn, {n: was["setting"] for n, was in before.items()})
    after = await _read(conn, list(before))
    for name, now in after.items():
        log.info("%s put back: %s (%s, %s)", name, now["setting"], now["source"],
                 now["sourcefile"])
    return after


async def _change(conn: psycopg.AsyncConnection[Any], dsn: str, wanted: dict[str, str]
                  ) -> None:
    for name, value in wanted.items():
        await conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(
            sql.Identifier(name), sql.Literal(value)))
    await _reload_until(conn, dsn, wanted)


@asynccontextmanager
async def autovacuum_on(dsn: str, naptime: int | None = None
                        ) -> AsyncIterator[dict[str, Any]]:
    """Autovacuum on for the block (a superuser's `dsn`), and autovacuum_naptime `naptime`
    seconds if given; what the server had (`before`), and every autovacuum_* setting as
    the run found it, are in the dict yielded, and `restored` after the block, however it
    ended (an error, Ctrl-C, SIGTERM through the soak's handler)."""
    wanted = {"autovacuum": "on"} | ({"autovacuum_naptime": str(naptime)} if naptime else {})
    async with await psycopg.AsyncConnection.connect(
            dsn, autocommit=True, row_factory=dict_row) as conn:
        got = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS got",
                                        (LOCK_KEY,))).fetchone()
        if not got or not got["got"]:
            raise AutovacuumBusy(AutovacuumBusy.__doc__)
        before = await _read(conn, list(wanted))
        others = await (await conn.execute(_OTHERS)).fetchall()
        changing = {n: v for n, v in wanted.items() if before[n]["setting"] != v}
        state: dict[str, Any] = {"before": before["autovacuum"],
                                 "changed": "autovacuum" in changing, "set": changing,
                                 "settings": {r["name"]: [r["value"], r["source"]]
                                              for r in others}}
        if not changing:
            yield state
            return
        try:
            await _change(conn, dsn, changing)
            yield state
        finally:
            restored = await _put_back(conn, dsn, {n: before[n] for n in changing})
            state["restored"] = restored.get("autovacuum", before["autovacuum"])
            state["restored_all"] = restored


async def autovacuum_stats(dsn: str) -> dict[str, dict[str, Any]]:
    """Each vacuumed table's autovacuum_count, vacuum_count, n_dead_tup, n_live_tup and
    last_autovacuum (ISO text or None), from pg_stat_user_tables."""
    async with await psycopg.AsyncConnection.connect(
            dsn, autocommit=True, row_factory=dict_row) as conn:
        rows = await (await conn.execute(_STATS, {"tables": list(VACUUMED)})).fetchall()
    return {r["relname"]: {k: (v.isoformat() if k == "last_autovacuum" and v else v)
                           for k, v in r.items() if k != "relname"}
            for r in sorted(rows, key=lambda r: VACUUMED.index(r["relname"]))}
