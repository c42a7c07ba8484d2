"""Shared fixtures: a migrated template database per session, cloned into a database per test."""

from __future__ import annotations

import asyncio
import os
import queue as queues
import threading
import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest

from bot.service import migrate_channels
from taskqueue import TaskQueue, migrate

ADMIN_DSN = os.environ.get("SIGNOFF_TEST_ADMIN_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


def _dsn_for(name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_DSN)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


def _admin(sql: str) -> None:
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(sql)


class _ClonePool:
    """Clones of the template made ahead of time, and drops done behind, on threads of their own.

    CREATE and DROP DATABASE each cost a checkpoint (about half a second); doing them
    while the previous test runs keeps a test's setup to a queue.get()."""

    # DROP DATABASE waits for a checkpoint; drops waiting together share one, so a few
    # droppers keep up on a busy machine where one fell behind by a hundred databases.
    DROPPERS = 3

    def __init__(self, template: str, spares: int = 2) -> None:
        self.template = template
        self.ready: queues.Queue[str | BaseException] = queues.Queue()
        self.creates: queues.Queue[bool] = queues.Queue()
        self.drops: queues.Queue[str | None] = queues.Queue()
        self.creator = threading.Thread(target=self._create_loop, daemon=True)
        self.droppers = [threading.Thread(target=self._drop_loop, daemon=True)
                         for _ in range(self.DROPPERS)]
        for t in (self.creator, *self.droppers):
            t.start()
        for _ in range(spares):
            self.creates.put(True)

    def _create_loop(self) -> None:
        while self.creates.get():
            name = f"signoff_t_{uuid.uuid4().hex[:12]}"
            try:
                _admin(f"CREATE DATABASE {name} TEMPLATE {self.template}")
                self.ready.put(name)
            except BaseException as exc:  # surfaced to the test that takes it
                self.ready.put(exc)

    def _drop_loop(self) -> None:
        while (name := self.drops.get()) is not None:
            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def take(self) -> str:
        self.creates.put(True)
        got = self.ready.get(timeout=120)
        if isinstance(got, BaseException):
            raise got
        return got

    def give_back(self, name: str) -> None:
        self.drops.put(name)

    def finish(self) -> None:
        """Stop making clones and hand the unused ones to the droppers, without waiting for
        them: the last test's teardown (bounded by pytest-timeout) must not wait out a
        backlog of drops; `pytest_sessionfinish` does."""
        self.creates.put(False)
        self.creator.join(timeout=120)
        while not self.ready.empty():
            got = self.ready.get()
            if isinstance(got, str):
                self.drops.put(got)
        for _ in self.droppers:
            self.drops.put(None)
        _FINISHING.append(self)

    def wait(self) -> None:
        for t in self.droppers:
            t.join(timeout=600)


# Clone pools whose drops are still running when the session's fixtures are torn down.
_FINISHING: list[_ClonePool] = []


def pytest_sessionfinish() -> None:
    """Every used database is dropped before pytest exits (the droppers are daemons)."""
    while _FINISHING:
        _FINISHING.pop().wait()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A slow test (processes, browsers, compilers) gets three times a test's time limit: on a
    busy machine building a wheel or the vCenter simulator alone can take minutes."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(900))


@pytest.fixture(autouse=True)
def _own_signoff_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run in this process (`publish_path`) set SIGNOFF_CONFIG for their handlers;
    each test starts without it and leaves none behind for the next."""
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)


@pytest.fixture(scope="session")
def template_db() -> Iterator[str]:
    """A database migrated once per session; each test clones it (CREATE DATABASE … TEMPLATE)."""
    name = f"signoff_tpl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    _admin(f"CREATE DATABASE {name}")
    asyncio.run(migrate(_dsn_for(name)))
    asyncio.run(migrate_channels(_dsn_for(name)))
    yield name
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def _clones(template_db: str) -> Iterator[_ClonePool]:
    pool = _ClonePool(template_db)
    yield pool
    pool.finish()


@pytest.fixture
def dsn(_clones: _ClonePool) -> Iterator[str]:
    """A fresh, migrated database of this test's own, dropped afterwards."""
    name = _clones.take()
    yield _dsn_for(name)
    _clones.give_back(name)


@pytest.fixture
def empty_dsn(_clones: _ClonePool) -> Iterator[str]:
    """A fresh database with no tables at all (for migration tests), dropped behind like a
    clone: a DROP waits for a checkpoint, and where fsync is slow (2 ms a file) and the fast
    tests clone a database a second, a checkpoint took minutes and a test's own drop ran
    past its time limit."""
    name = f"signoff_e_{uuid.uuid4().hex[:12]}"
    _admin(f"CREATE DATABASE {name}")
    yield _dsn_for(name)
    _clones.give_back(name)


@pytest.fixture
async def queue(dsn: str) -> AsyncIterator[TaskQueue]:
    """A TaskQueue on this test's database, with room for concurrent callers."""
    async with TaskQueue.connect(dsn, min_size=1, max_size=20) as q:
        yield q


@pytest.fixture
def offline() -> TaskQueue:
    """A TaskQueue with no database, for checks that must refuse before touching one."""
    from typing import Any, cast

    return TaskQueue(cast(Any, None))
