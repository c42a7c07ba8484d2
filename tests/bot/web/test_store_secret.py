"""The web's signing key: services starting together on a new database all get the one key the
first of them made (a race once made the second start fail with an IndexError)."""

from __future__ import annotations

import asyncio
import threading

import psycopg

from bot.web.store import AccountStore
from taskqueue import TaskQueue

STARTS = 6
ROUNDS = 10


def _first_start(dsn: str, barrier: threading.Barrier) -> bytes:
    """One service's first read of the key, on a connection of its own, released together."""
    async def read() -> bytes:
        async with TaskQueue.connect(dsn, min_size=1, max_size=1) as queue:
            store = AccountStore(queue.pool)
            await store.account_count()  # the connection is open before the race starts
            await asyncio.to_thread(barrier.wait, 60)
            return await store.secret_ensure()
    return asyncio.run(read())


def _starts_together(dsn: str) -> tuple[list[bytes], list[BaseException]]:
    """STARTS first reads at once: the keys they got and what they raised."""
    barrier = threading.Barrier(STARTS)
    keys: list[bytes] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            keys.append(_first_start(dsn, barrier))
        except BaseException as exc:  # reported by the test, with the others'
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(STARTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return keys, errors


def test_services_starting_together_all_get_the_first_ones_key(dsn: str) -> None:
    for _ in range(ROUNDS):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DELETE FROM web_secrets")
        keys, errors = _starts_together(dsn)
        assert errors == []
        assert len(keys) == STARTS and len(set(keys)) == 1 and len(keys[0]) == 32
        with psycopg.connect(dsn) as conn:
            stored = conn.execute("SELECT value FROM web_secrets").fetchall()
        assert stored == [(keys[0],)]


async def test_a_later_start_reads_the_key_already_made(queue: TaskQueue) -> None:
    store = AccountStore(queue.pool)
    first = await store.secret_ensure()
    assert await store.secret_ensure() == first
    assert await store.secret_ensure("other") != first
