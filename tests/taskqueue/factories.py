"""Task factories and helpers for the queue tests: tasks in a given status, raw SQL, threads,
an older release's migrations."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from taskqueue import Approval, Decision, NewAttachment, Reaper, Status, Task, TaskQueue
from taskqueue.store.migrate import migrations_dir

CAP = "demo"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n%%EOF\n"

T = TypeVar("T")


async def enqueue(queue: TaskQueue, capability: str = CAP, **kwargs: Any) -> int:
    """A new pending task's id."""
    payload = kwargs.pop("payload", {"n": 1})
    return (await queue.task_enqueue(capability, payload, **kwargs)).id


async def claimed(queue: TaskQueue, capability: str = CAP, worker: str = "w1",
                  **kwargs: Any) -> Task:
    """A new task, claimed by `worker`."""
    task_id = await enqueue(queue, capability, **kwargs)
    task = await queue.task_claim(capability, worker)
    assert task is not None and task.id == task_id
    return task


async def parked(queue: TaskQueue, capability: str = CAP, worker: str = "w1",
                 question: str = "Send it?", **kwargs: Any) -> tuple[Task, Approval]:
    """A new task, claimed and parked at a question; the task as it was when claimed."""
    task = await claimed(queue, capability, worker)
    approval = await queue.task_park(task.id, worker, question, claim=task.claim, **kwargs)
    return task, approval


async def task_in(queue: TaskQueue, status: Status, capability: str = CAP) -> int:
    """A task driven through the API into `status`; returns its id."""
    if status is Status.PENDING:
        return await enqueue(queue, capability)
    if status is Status.CANCELLED:
        task_id = await enqueue(queue, capability)
        await queue.task_cancel(task_id)
        return task_id
    task = await claimed(queue, capability)
    if status is Status.RUNNING:
        return task.id
    if status is Status.SUCCEEDED:
        await queue.task_complete(task.id, "w1", claim=task.claim)
    elif status is Status.FAILED:
        await queue.task_fail(task.id, "w1", "boom", claim=task.claim, retry=False)
    else:
        await queue.task_park(task.id, "w1", "Go?", claim=task.claim)
        if status is Status.APPROVED:
            await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
        elif status is Status.SKIPPED:
            await queue.approval_decide_for_task(task.id, Decision.SKIPPED, "alice")
        elif status is Status.EXPIRED:
            await sql(queue, "UPDATE approvals SET expires_at = now() - interval '1 s' "
                             "WHERE task_id = %s", task.id)
            await Reaper(queue).run_once()
    assert (await queue.task_get(task.id)).status is status
    return task.id


async def sql(queue: TaskQueue, statement: str, *params: Any) -> list[dict[str, Any]]:
    """Run one statement on the queue's pool (autocommit); its rows, or [] for none."""
    async with queue.pool.connection() as conn:
        cur = await conn.execute(statement, params or None)
        return await cur.fetchall() if cur.description else []


async def value(queue: TaskQueue, statement: str, *params: Any) -> Any:
    """The first column of the first row of a query."""
    [row] = await sql(queue, statement, *params)
    return next(iter(row.values()))


async def backdate(queue: TaskQueue, table: str, column: str, interval: str,
                   where: str = "true", *params: Any) -> None:
    """Move a timestamp column of some rows into the past, e.g. ('tasks', 'created_at', '7 h')."""
    await sql(queue, f"UPDATE {table} SET {column} = now() - %s::interval WHERE {where}",
              interval, *params)


async def untouched_update(queue: TaskQueue, statement: str, *params: Any) -> None:
    """Run an UPDATE of tasks without the trigger that sets updated_at = now()."""
    async with queue.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute(statement, params or None)


def sync_rows(dsn: str, statement: str, *params: Any) -> list[dict[str, Any]]:
    """Run one statement on a connection of its own (for threads and sampling)."""
    with psycopg.connect(dsn, autocommit=True, row_factory=dict_row) as conn:
        cur = conn.execute(statement, params or None)
        return cur.fetchall() if cur.description else []


def in_threads(n: int, dsn: str, work: Callable[[TaskQueue, int], Awaitable[T]],
               *, pool_size: int = 1) -> list[T]:
    """Run `work(queue, i)` in n threads at once, each with its own event loop and TaskQueue.

    All threads connect first and then pass a barrier, so the calls really overlap.
    Returns the results in thread order; an exception in any thread is raised here.
    """
    barrier = threading.Barrier(n, timeout=60)

    async def run(i: int) -> T:
        async with TaskQueue.connect(dsn, min_size=pool_size, max_size=pool_size) as queue:
            await asyncio.to_thread(barrier.wait)
            return await work(queue, i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(asyncio.run, run(i)) for i in range(n)]
        return [f.result() for f in futures]


def attachment(name: str, data: bytes) -> NewAttachment:
    return NewAttachment(name, data)


async def approved_and_done(queue: TaskQueue, capability: str = CAP) -> int:
    """A task that parked with an attachment, was approved, resumed and succeeded; its id."""
    task = await claimed(queue, capability)
    await queue.task_park(task.id, "w1", "Send?", claim=task.claim,
                          attachments=[attachment("cv.txt", b"hello")])
    await queue.approval_decide_for_task(task.id, Decision.APPROVED, "alice")
    again = await queue.task_claim(capability, "w1")
    assert again is not None and again.id == task.id
    await queue.task_complete(task.id, "w1", claim=again.claim)
    return task.id


def migrations_before(tmp_path: Path, version: str) -> Path:
    """A copy of the core migrations as a release before `version` shipped them (that one
    and every later one left out), for a migration's test of the rows written before it."""
    copy = tmp_path / "migrations"
    shutil.copytree(migrations_dir(), copy)
    for later in copy.glob("*.sql"):
        if later.name >= version:
            later.unlink()
    return copy
