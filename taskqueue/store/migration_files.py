"""Where the core's migration files are and how they are named: NNNN_name.sql in the
package's migrations/ (or SIGNOFF_MIGRATIONS_DIR), listed in version order without reading
them.

migrate.py applies them; schema_guard.py needs only the newest one's number, at the start
of every command, and so neither loads the migrator nor reads the files."""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

from taskqueue.errors import MigrationError

FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def migrations_dir() -> Path:
    """SIGNOFF_MIGRATIONS_DIR, else the migrations shipped inside this package."""
    configured = os.environ.get("SIGNOFF_MIGRATIONS_DIR")
    if configured:
        return Path(configured)
    return Path(str(resources.files(__package__).joinpath("migrations")))


def migration_files(folder: Path) -> list[tuple[str, str, Path]]:
    """Each migration file's (version, name, path), in version order; MigrationError for a
    missing folder, a misnamed .sql file, or two files of one version."""
    if not folder.is_dir():
        raise MigrationError(f"no migrations folder at {folder}")
    found = []
    for path in sorted(folder.glob("*.sql")):
        match = FILE_NAME.match(path.name)
        if not match:
            raise MigrationError(f"migration file {path.name} is not named NNNN_name.sql")
        found.append((match[1], match[2], path))
    versions = [version for version, _, _ in found]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migration files share a version number")
    return found
