"""store/schema.sql is what the core's migrations make from zero (store/schema_dump.py), so a
reader finds the schema in force, the claim included, in one file."""

from __future__ import annotations

import re
from pathlib import Path

from taskqueue.store import schema_dump
from taskqueue.store.migrate import discover
from tests.conftest import ADMIN_DSN


def test_schema_sql_matches_the_migrations_from_zero() -> None:
    problem = schema_dump.check(ADMIN_DSN)
    assert problem is None, problem


def test_a_stale_file_is_named_with_the_command_that_remakes_it(tmp_path: Path) -> None:
    made = schema_dump.SCHEMA_FILE.read_text("utf-8")
    stale = tmp_path / "schema.sql"
    stale.write_text(made + "-- edited by hand\n")
    assert schema_dump.differs(made, schema_dump.Schema(stale)) == (
        f"{stale} does not match its migrations: run "
        "`python -m taskqueue.store.schema_dump` and commit the file")
    assert schema_dump.differs(made, schema_dump.Schema(tmp_path / "absent.sql")) is not None
    stale.write_text(made)
    assert schema_dump.differs(made, schema_dump.Schema(stale)) is None


def test_the_header_names_the_migration_whose_claim_is_in_force() -> None:
    defines = re.compile(r"^CREATE (OR REPLACE )?FUNCTION signoff_claim\(", re.MULTILINE)
    [*_, last] = [m for m in discover() if defines.search(m.sql)]
    assert f"defined by migration {last.version}_{last.name}.sql" in " ".join(
        schema_dump.HEADER.replace("--", "").split())
    assert schema_dump.SCHEMA_FILE.read_text("utf-8").startswith(schema_dump.HEADER)


def test_what_varies_between_runs_and_releases_is_left_out() -> None:
    dump = "\n".join([
        "--", "-- PostgreSQL database dump", "--", "",
        "\\restrict 3mJq9Yb1XkzA", "",
        "-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)",
        "-- Dumped by pg_dump version 18.4", "",
        "SET statement_timeout = 0;", "SELECT pg_catalog.set_config('search_path', '', false);",
        "", "--", "-- Name: t; Type: TABLE; Schema: public; Owner: -", "--", "",
        "CREATE TABLE public.t (", "    id bigint NOT NULL", ");", "",
        "ALTER TABLE ONLY public.t ALTER COLUMN id SET (pg_attver=570664904);", "", "",
        "--", "-- PostgreSQL database dump complete", "--", "",
        "\\unrestrict 3mJq9Yb1XkzA", ""])
    assert schema_dump.normalise(dump) == [
        "-- Name: t; Type: TABLE\n\nCREATE TABLE public.t (\n    id bigint NOT NULL\n);"]
