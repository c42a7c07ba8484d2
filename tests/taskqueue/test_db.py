"""Where the database is: DATABASE_URL, and one clear error naming host and port when it is down."""

from __future__ import annotations

import pytest

from taskqueue import DatabaseUnavailable, TaskQueue
from taskqueue.store.db import check_reachable, describe, resolve_dsn
from taskqueue.store.migrate import migrate


def test_resolve_dsn_uses_database_url_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@db.example:6543/x")
    assert resolve_dsn() == "postgresql://u@db.example:6543/x"


@pytest.mark.parametrize(("dsn", "where"), [
    ("postgresql://u@db.example:6543/x", "db.example:6543"),
    ("postgresql://u@127.0.0.1/x", "127.0.0.1:5432"),
    ("host=/run/pg port=5433 dbname=x", "socket /run/pg port 5433"),
])
def test_describe_names_host_and_port(dsn: str, where: str) -> None:
    assert describe(dsn) == where


UNREACHABLE = "postgresql://postgres@127.0.0.1:1/postgres"


async def test_an_unreachable_database_is_one_clear_error() -> None:
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        await check_reachable(UNREACHABLE, timeout=2)
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        async with TaskQueue.connect(UNREACHABLE):
            pass
    with pytest.raises(DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        await migrate(UNREACHABLE)


async def test_a_malformed_database_url_is_one_clear_error() -> None:
    with pytest.raises(DatabaseUnavailable, match="not a valid connection string"):
        await check_reachable("host=127.0.0.1 dbname")
