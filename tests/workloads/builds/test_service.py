"""Through the service: `python -m bot --config FILE` runs roblox_build in a pool (Telegram
off): it builds to the park, an approve lets it publish once, the task completes, and
`signoff stats roblox_build` reads its stages from the database."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from taskqueue import TaskQueue
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status

from .conftest import FAKE_BUILD, Repo
from .fake_open_cloud import KEY, FakeOpenCloud

pytestmark = pytest.mark.slow


def _config(tmp_path: Path, cloud: FakeOpenCloud) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(f"""
[worker]
poll_interval_seconds = 0.2
grace_seconds = 2

[capabilities.roblox_build]
handler = "workloads.builds.roblox:handle"
mode = "pool"
max_running = 1
lease_seconds = 30

[workloads.roblox_build]
command = ["{sys.executable}", "{FAKE_BUILD}", "fast", "{{output}}/place.rbxl"]
work_dir = "{tmp_path / 'work'}"
store = "{tmp_path / 'store'}"
base_url = "{cloud.url}"
universe_id = 5
place_id = 6
""")
    return path


def _spawn(args: list[str], dsn: str, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
           "SIGNOFF_ROBLOX_API_KEY": KEY}
    for key in ("SIGNOFF_CONFIG", "TELEGRAM_BOT_TOKEN"):
        env.pop(key, None)
    with out.open("ab") as f:
        return subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env=env,
                                stdout=f, stderr=subprocess.STDOUT)


async def test_the_service_builds_parks_publishes_after_approve_and_reports_stats(
        queue: TaskQueue, dsn: str, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path) -> None:
    out = tmp_path / "service.log"
    proc = _spawn(["bot", "--config", str(_config(tmp_path, cloud))], dsn, out)
    try:
        await wait_for(lambda: _logged(out, "service started"), timeout=20)
        task_id = (await queue.task_enqueue("roblox_build", repo.payload())).id
        await wait_status(queue, task_id, "needs_approval", timeout=20)
        assert cloud.requests == 0
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        task = await wait_status(queue, task_id, "succeeded", timeout=20)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(asyncio.to_thread(proc.wait), 15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(cloud.published) == 1 and cloud.published[0].place == "6", out.read_text()
    assert task.result is not None and task.result["published"]["versionNumber"] == 1
    stats = subprocess.run([sys.executable, "-m", "taskqueue", "stats", "roblox_build",
                            "--json"], cwd=ROOT, capture_output=True, text=True, timeout=30,
                           env={**os.environ, "DATABASE_URL": dsn})
    assert stats.returncode == 0, stats.stderr
    stages = json.loads(stats.stdout)["stages"]
    for stage in ("building", "built", "parked", "approved", "publish_started", "published"):
        assert stages.get(stage) == 1, stages


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()
