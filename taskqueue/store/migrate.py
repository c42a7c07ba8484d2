"""Applies the numbered SQL files of migrations/ in order, once each, under an advisory lock."""

from __future__ import annotations

import hashlib
import logging
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import psycopg

from taskqueue.errors import MigrationError
from taskqueue.store.db import check_reachable

log = logging.getLogger("signoff.migrate")

# Held for the whole run, so processes migrating at once apply each file exactly once.
LOCK_KEY = 0x5167_6E6F_6666  # "Signoff"
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

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


def migrations_dir() -> Path:
    """SIGNOFF_MIGRATIONS_DIR, else the migrations shipped inside this package."""
    configured = os.environ.get("SIGNOFF_MIGRATIONS_DIR")
    if configured:
        return Path(configured)
    return Path(str(resources.files(__package__).joinpath("migrations")))


def discover(folder: Path | None = None) -> list[Migration]:
    """The migration files in version order; a misnamed .sql file is an error."""
    folder = folder or migrations_dir()
    if not folder.is_dir():
        raise MigrationError(f"no migrations folder at {folder}")
    found: list[Migration] = []
    for path in sorted(folder.glob("*.sql")):
        match = _FILE.match(path.name)
        if not match:
            raise MigrationError(f"migration file {path.name} is not named NNNN_name.sql")
        found.append(Migration(match[1], match[2], path.read_text("utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migration files share a version number")
    return found


async def migrate(dsn: str, folder: Path | None = None, *, owner: str | None = None
                  ) -> list[str]:
    """Apply pending migrations; returns the versions applied (empty when up to date).

    The core's migrations are recorded by their number; a user of the core (a delivery
    channel) applies its own folder under its `owner` name, recorded as `owner/NNNN`, so
    each set is checked and applied on its own."""
    wanted = discover(folder)
    prefix = f"{owner}/" if owner else ""
    await check_reachable(dsn)
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            await conn.execute(_CREATE_TABLE)
            cur = await conn.execute("SELECT version, name, checksum FROM schema_migrations")
            applied = {v.removeprefix(prefix): (n, c) for v, n, c in await cur.fetchall()
                       if (v.startswith(prefix) if prefix else "/" not in v)}
            _check_applied(wanted, applied)
            done = []
            for m in wanted:
                if m.version not in applied:
                    await _apply(conn, m, prefix)
                    done.append(m.version)
            return done
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))


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
                 prefix: str) -> None:
    try:
        async with conn.transaction():
            await conn.execute(m.sql.encode("utf-8"))
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                (prefix + m.version, m.name, m.checksum))
    except psycopg.Error as exc:
        raise MigrationError(f"migration {m.version}_{m.name}.sql failed: {exc}") from None
    log.info("migration applied version=%s%s name=%s", prefix, m.version, m.name)
