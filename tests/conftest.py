"""Shared fixtures: a migrated template database per session, cloned into a fresh database per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest

from taskqueue import TaskQueue
from taskqueue.migrate import migrate

ADMIN_DSN = os.environ.get("SIGNOFF_TEST_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


def _dsn_for(name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_DSN)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


def _admin(sql: str) -> None:
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(scope="session")
def template_db() -> Iterator[str]:
    """A database migrated once per session; each test clones it (CREATE DATABASE … TEMPLATE)."""
    name = f"signoff_tpl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    _admin(f"CREATE DATABASE {name}")
    import asyncio

    asyncio.run(migrate(_dsn_for(name)))
    yield name
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def dsn(template_db: str) -> Iterator[str]:
    """A fresh, migrated database of this test's own, dropped afterwards."""
    name = f"signoff_t_{uuid.uuid4().hex[:12]}"
    _admin(f"CREATE DATABASE {name} TEMPLATE {template_db}")
    yield _dsn_for(name)
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def empty_dsn() -> Iterator[str]:
    """A fresh database with no tables at all (for migration tests)."""
    name = f"signoff_e_{uuid.uuid4().hex[:12]}"
    _admin(f"CREATE DATABASE {name}")
    yield _dsn_for(name)
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
async def queue(dsn: str) -> AsyncIterator[TaskQueue]:
    """A TaskQueue on this test's database, with room for concurrent callers."""
    async with TaskQueue.connect(dsn, min_size=1, max_size=20) as q:
        yield q
