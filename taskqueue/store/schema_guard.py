"""Whether a database was migrated by a newer Signoff than this client: then it may read, and
never decide, claim or park."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import psycopg

from taskqueue.errors import MigrationError, SchemaTooNew
from taskqueue.store.migration_files import migration_files, migrations_dir

# The core's newest applied migration; channels record theirs as `owner/NNNN`.
_NEWEST_APPLIED = """
SELECT max(version) AS version FROM schema_migrations WHERE version NOT LIKE '%/%'"""


@cache
def _known(folder: str) -> str:
    try:
        return max((version for version, _, _ in migration_files(Path(folder))), default="")
    except MigrationError:
        return ""


def known_version() -> str:
    """The highest core migration this client ships (SIGNOFF_MIGRATIONS_DIR's when set)."""
    return _known(str(migrations_dir()))


async def newer_schema(conn: psycopg.AsyncConnection[Any]) -> str | None:
    """The database's newest core migration when this client does not know it, else None
    (also on a database with no migrations table yet)."""
    known = known_version()
    if not known:
        return None
    try:
        if conn.autocommit:  # one statement: no BEGIN and COMMIT round trips around it
            row = await (await conn.execute(_NEWEST_APPLIED)).fetchone()
        else:  # in a caller's transaction: a missing table must not abort it
            async with conn.transaction():
                row = await (await conn.execute(_NEWEST_APPLIED)).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    found = _value(row)
    return found if found and found > known else None


def _value(row: Any) -> str | None:
    if row is None:
        return None
    return row["version"] if isinstance(row, dict) else row[0]


def refuse_newer(newest: str | None) -> None:
    """SchemaTooNew, in one line naming both versions, when the database is newer."""
    if newest is not None:
        raise SchemaTooNew(
            f"this database was migrated by a newer Signoff ({newest}); this signoff knows "
            f"up to {known_version()}: upgrade it")
