"""Applies the numbered SQL files of migrations/ in order, once each, under an advisory lock
(held by the session for the run, and by each file's transaction)."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import psycopg

from taskqueue.errors import MigrationError
from taskqueue.store import pooler
from taskqueue.store.db import check_reachable
from taskqueue.store.migration_files import migration_files, migrations_dir

log = logging.getLogger("signoff.migrate")

# Taken in each migration's transaction, so processes migrating at once apply each file
# exactly once, through a transaction pooler too.
LOCK_KEY = 0x5167_6E6F_6666  # "Signoff"

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    text PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


@dataclass(frozen=True)
class Migration:
    version: str
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def discover(folder: Path | None = None) -> list[Migration]:
    """The migration files in version order, read; a misnamed .sql file is an error."""
    return [Migration(version, name, path.read_text("utf-8"))
            for version, name, path in migration_files(folder or migrations_dir())]


async def migrate(dsn: str, folder: Path | None = None, *, owner: str | None = None
                  ) -> list[str]:
    """Apply pending migrations; returns the versions applied (empty when up to date).

    The core's migrations are recorded by their number; a user of the core (a delivery
    channel) applies its own folder under its `owner` name, recorded as `owner/NNNN`, so
    each set is checked and applied on its own. Through a transaction pooler they run on
    SIGNOFF_DIRECT_URL when it is set, else through the pooler (store/pooler.py)."""
    wanted = discover(folder)
    prefix = f"{owner}/" if owner else ""
    await check_reachable(dsn)
    session = pooler.session_dsn(dsn)
    if session is not None and session != dsn:
        await check_reachable(session)
    async with await psycopg.AsyncConnection.connect(
            session or dsn, autocommit=True, **pooler.pool_kwargs(session or dsn)) as conn:
        if session is not None:
            # A session holds the lock for the whole run, so one process applies them all
            # (through a transaction pooler without a direct URL, each file's own lock).
            await conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                await conn.execute(_CREATE_TABLE)
            _check_applied(wanted, await _applied(conn, prefix))
            return [m.version for m in wanted if await _apply(conn, m, prefix)]
        finally:
            if session is not None:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))


async def _applied(conn: psycopg.AsyncConnection[tuple[object, ...]], prefix: str
                   ) -> dict[str, tuple[str, str]]:
    cur = await conn.execute("SELECT version, name, checksum FROM schema_migrations")
    found = [(str(v), str(n), str(c)) for v, n, c in await cur.fetchall()]
    return {v.removeprefix(prefix): (n, c) for v, n, c in found
            if (v.startswith(prefix) if prefix else "/" not in v)}


def _check_applied(wanted: list[Migration], applied: dict[str, tuple[str, str]]) -> None:
    known = {m.version: m for m in wanted}
    newest = max(known, default="")
    for version, (name, checksum) in sorted(applied.items()):
        m = known.get(version)
        if m is None and version > newest:
            raise MigrationError(
                f"the database has migration {version}_{name}, which is not in the folder")
        if m is None:
            # A retired number below the newest: its objects belong to another owner now.
            log.info("migration %s_%s is retired; its objects are not the core's", version, name)
        elif m.checksum != checksum:
            raise MigrationError(
                f"migration {version}_{m.name}.sql was edited after it was applied "
                "(checksum differs); add a new migration instead")


async def _apply(conn: psycopg.AsyncConnection[tuple[object, ...]], m: Migration,
                 prefix: str) -> bool:
    """Apply `m` unless it is recorded; False when it was (another process applied it).

    The lock is transaction-level, taken per migration, so it holds through a pooler in
    transaction mode as on the server itself; the second process waits for the first's
    commit and then finds the file recorded."""
    try:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            cur = await conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s",
                                     (prefix + m.version,))
            if await cur.fetchone() is not None:
                return False
            await conn.execute(m.sql.encode("utf-8"))
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                (prefix + m.version, m.name, m.checksum))
    except psycopg.Error as exc:
        raise MigrationError(f"migration {m.version}_{m.name}.sql failed: {exc}") from None
    log.info("migration applied version=%s%s name=%s", prefix, m.version, m.name)
    return True
