"""The embedded default: a private PostgreSQL under a data folder when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from taskqueue import TaskQueue
from taskqueue.store import embedded
from taskqueue.store.db import resolve_dsn
from taskqueue.store.migrate import discover, migrate


@pytest.mark.slow
async def test_embedded_server_starts_connects_and_migrates(
        data_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = await asyncio.to_thread(embedded.start, data_folder)
    assert await migrate(uri) == [m.version for m in discover()]
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        cur = await conn.execute("SELECT count(*) FROM schema_migrations")
        assert await cur.fetchone() == (len(discover()),)
    # Without DATABASE_URL the queue uses the same server, found through the data folder.
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("SIGNOFF_DATA_DIR", str(data_folder))
    assert await asyncio.to_thread(resolve_dsn) == uri
    async with TaskQueue.connect() as queue:
        enq = await queue.task_enqueue("demo")
        task = await queue.task_claim("demo", "w1")
        assert task is not None and task.id == enq.id


def test_data_dir_comes_from_signoff_data_dir(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("SIGNOFF_DATA_DIR", str(tmp_path))
    assert embedded.data_dir() == tmp_path.resolve()
    monkeypatch.delenv("SIGNOFF_DATA_DIR")
    assert not str(embedded.data_dir()).startswith("/root")
