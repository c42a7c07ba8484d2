"""kill -9 of a real `signoff worker` mid-slice: recovery sends exactly one briefing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from taskqueue import Reaper, Status, TaskQueue
from tests.taskqueue.worker_helpers import ROOT, events, wait_for
from workloads.briefing.checkpoints import CRASH_DIR_ENV, CRASH_ENV

from .flow import enqueue, messages
from .seed import CAP, HANDLER, Seeded

pytestmark = pytest.mark.slow


def _spawn(dsn: str, config: Path, crash_dir: Path, name: str,
           log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "SIGNOFF_CONFIG": str(config),
           CRASH_ENV: "send.before,send.after", CRASH_DIR_ENV: str(crash_dir),
           "PYTHONUNBUFFERED": "1"}
    cmd = [str(Path(sys.executable).with_name("signoff")), "worker", "--capability", CAP,
           "--handler", HANDLER, "--lease", "1", "--poll-interval", "0.2", "--name", name]
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


async def _reaped(queue: TaskQueue) -> bool:
    return (await Reaper(queue).run_once()).requeued > 0


async def _status(queue: TaskQueue, task_id: int, status: Status) -> bool:
    return (await queue.task_get(task_id)).status == status


async def test_kill_9_before_and_after_the_send_recovers_with_exactly_one_briefing(
        queue: TaskQueue, dsn: str, config_file: Path, seeded: Seeded, today: date,
        tmp_path: Path) -> None:
    crash_dir, log = tmp_path / "crashed", tmp_path / "worker.log"
    crash_dir.mkdir()
    task_id = await enqueue(queue, today, max_attempts=5)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        # First dies before the send (nothing sent), second right after it (sent, unmarked).
        for name, sent in (("first", 0), ("second", 1)):
            procs.append(_spawn(dsn, config_file, crash_dir, name, log))
            code = await asyncio.wait_for(asyncio.to_thread(procs[-1].wait), 30)
            assert code == -signal.SIGKILL, log.read_text()[-2000:]
            assert len(await messages(queue)) == sent
            await wait_for(lambda: _reaped(queue), timeout=10, every=0.2)
        procs.append(_spawn(dsn, config_file, crash_dir, "third", log))
        await wait_for(lambda: _status(queue, task_id, Status.SUCCEEDED), timeout=30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(15)

    assert sorted(p.name for p in crash_dir.iterdir()) == ["send.after", "send.before"]
    [message] = await messages(queue)
    assert message["task_id"] == task_id and "Backend Engineer at Nordwind" in message["body"][
        "html"]
    task = await queue.task_get(task_id)
    assert task.result is not None and task.result["recovered"] is True
    assert task.result["notification_id"] == message["id"] and task.result["succeeded"] == 2
    claimed = [e.actor for e in await events(queue, task_id, "claimed")]
    assert claimed == ["first", "second", "third"]
