"""The peers measured beside Signoff: PgQueuer (when the `bench` extra is installed) and a
minimal 2-statement SKIP LOCKED reference queue. Each drain is checked exactly once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg

from bench.measure import rate

_REF_SCHEMA = """
CREATE TABLE IF NOT EXISTS ref_jobs (id bigserial PRIMARY KEY, queue text NOT NULL,
    status text NOT NULL DEFAULT 'queued', payload jsonb NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS ref_jobs_queued_idx ON ref_jobs (queue, id) WHERE status = 'queued'
"""
# The whole reference queue: one statement claims, one completes.
_REF_CLAIM = """
UPDATE ref_jobs SET status = 'running'
WHERE id = (SELECT id FROM ref_jobs WHERE queue = %s AND status = 'queued'
            ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id"""
_REF_COMPLETE = "UPDATE ref_jobs SET status = 'done' WHERE id = %s AND status = 'running'"


def url(dsn: str) -> str:
    """A postgresql:// URL for asyncpg, which reads no key=value conninfo."""
    d = psycopg.conninfo.conninfo_to_dict(dsn)
    auth = f"{d.get('user', 'postgres')}" + (f":{d['password']}" if d.get("password") else "")
    return (f"postgresql://{auth}@{d.get('host', '127.0.0.1')}:{d.get('port', 5432)}/"
            f"{d.get('dbname', 'postgres')}")


def pgqueuer_available() -> bool:
    try:
        import asyncpg  # noqa: F401
        import pgqueuer  # noqa: F401
    except ImportError:
        return False
    return True


def _verdict(ids: list[int], expected: int, seconds: float) -> dict[str, Any]:
    return {"tasks": expected, "seconds": round(seconds, 3), "tasks_per_s": rate(expected, seconds),
            "exactly_once": len(ids) == expected and len(set(ids)) == expected}


async def reference_drain(dsn: str, tasks: int, claimers: int, tag: str) -> dict[str, Any]:
    """Claim + complete `tasks` jobs with `claimers` connections of their own."""
    await reference_enqueue(dsn, tasks, tag)
    return await reference_drain_enqueued(dsn, tasks, claimers, tag)


async def reference_enqueue(dsn: str, tasks: int, tag: str) -> None:
    """The reference queue's table, and `tasks` jobs of queue `tag` in it."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for statement in _REF_SCHEMA.split(";"):
            await conn.execute(statement)
        await conn.execute("INSERT INTO ref_jobs (queue) SELECT %s FROM generate_series(1, %s)",
                           (tag, tasks))


async def reference_drain_enqueued(dsn: str, tasks: int, claimers: int,
                                   tag: str) -> dict[str, Any]:
    """Claim + complete the `tasks` jobs reference_enqueue put in queue `tag`."""

    async def claimer() -> list[int]:
        done: list[int] = []
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
            while True:
                row = await (await c.execute(_REF_CLAIM, (tag,), prepare=True)).fetchone()
                if row is None:
                    return done
                await c.execute(_REF_COMPLETE, (row[0],), prepare=True)
                done.append(row[0])

    started = time.perf_counter()
    runs = await asyncio.gather(*(claimer() for _ in range(claimers)))
    figure = _verdict([i for r in runs for i in r], tasks, time.perf_counter() - started)
    return {"claimers": claimers, **figure}


async def pgqueuer_install(dsn: str) -> None:
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    conn = await asyncpg.connect(url(dsn))
    try:
        await Queries(AsyncpgDriver(conn)).install()
    finally:
        await conn.close()


async def pgqueuer_enqueue(dsn: str, tasks: int, batch: int, entrypoint: str) -> float:
    """Seconds to enqueue `tasks` jobs in calls of `batch` (PgQueuer's batch enqueue)."""
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    conn = await asyncpg.connect(url(dsn))
    try:
        queries = Queries(AsyncpgDriver(conn))
        started = time.perf_counter()
        for start in range(0, tasks, batch):
            n = min(batch, tasks - start)
            await queries.enqueue([entrypoint] * n, [None] * n, [0] * n)
        return time.perf_counter() - started
    finally:
        await conn.close()


async def pgqueuer_drain(dsn: str, tasks: int, claimers: int, tag: str) -> dict[str, Any]:
    """`claimers` QueueManagers (asyncpg, batch 10) drain `tasks` no-op jobs."""
    await pgqueuer_enqueue(dsn, tasks, 1000, tag)
    return await pgqueuer_drain_enqueued(dsn, tasks, claimers, tag)


async def pgqueuer_drain_enqueued(dsn: str, tasks: int, claimers: int,
                                  tag: str) -> dict[str, Any]:
    """`claimers` QueueManagers (asyncpg, batch 10) drain the `tasks` jobs of entrypoint
    `tag` that pgqueuer_enqueue put there."""
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries, QueueManager

    ids: list[int] = []
    conns = [await asyncpg.connect(url(dsn)) for _ in range(claimers)]
    try:
        managers = [QueueManager(Queries(AsyncpgDriver(c))) for c in conns]
        for qm in managers:
            async def noop(job: Any) -> None:
                ids.append(int(job.id))
            qm.entrypoint(tag)(noop)
        started = time.perf_counter()
        from pgqueuer.types import QueueExecutionMode
        await asyncio.gather(*(qm.run(batch_size=10, mode=QueueExecutionMode.drain)
                               for qm in managers))
        seconds = time.perf_counter() - started
    finally:
        for c in conns:
            await c.close()
    return {"claimers": claimers, **_verdict(ids, tasks, seconds)}
