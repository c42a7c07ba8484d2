"""Through the service: `python -m bot --config FILE` runs code_changes in a pool to its park;
`signoff approve` lets it push and open the pull request; `signoff stats` reports it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from taskqueue import TaskQueue
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status
from workloads.code_changes.handler import CAPABILITY
from workloads.code_changes.settings import CodeSettings

from .conftest import Remote, payload
from .fake_github import TOKEN, FakeGitHub


def _config(settings: CodeSettings, tmp_path: Path) -> Path:
    assert settings.github is not None
    argv = json.dumps(list(settings.agent_command))
    tests = json.dumps(list(settings.test_command))
    shown = json.dumps([str(p) for p in settings.sandbox_read])
    path = tmp_path / "signoff.toml"
    path.write_text(f"""
[worker]
poll_interval_seconds = 0.2
grace_seconds = 1

[capabilities.code_changes]
handler = "workloads.code_changes.handler:handle"
mode = "pool"
max_running = 1
max_parked = 5
lease_seconds = 30

[workloads.code_changes]
workspace = "{settings.workspace}"
agent_command = {argv}
test_command = {tests}
sandbox_read = {shown}

[workloads.code_changes.github]
api_url = "{settings.github.api_url}"
repo = "acme/widgets"
""")
    return path


def _env(dsn: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
           "SIGNOFF_GITHUB_TOKEN": TOKEN}
    for key in ("SIGNOFF_CONFIG", "TELEGRAM_BOT_TOKEN"):
        env.pop(key, None)
    return env


def _cli(dsn: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "taskqueue", *args], cwd=ROOT, env=_env(dsn),
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_the_service_runs_a_code_change_to_its_park_and_pushes_after_approve(
        dsn: str, queue: TaskQueue, remote: Remote, settings: CodeSettings,
        github: FakeGitHub, tmp_path: Path) -> None:
    out = tmp_path / "service.log"
    with out.open("ab") as f:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "--config",
                                 str(_config(settings, tmp_path))], cwd=ROOT, env=_env(dsn),
                                stdout=f, stderr=subprocess.STDOUT)
    try:
        await wait_for(lambda: _logged(out, "service started"), timeout=20)
        task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
        parked = await wait_status(queue, task_id, "needs_approval", timeout=20)
        assert parked.approval is not None and remote.pushes() == []
        await asyncio.to_thread(_cli, dsn, "approve", str(task_id), "--by", "alice")
        done = await wait_status(queue, task_id, "succeeded", timeout=20)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 15) == 0, out.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    sha = parked.approval.request["commit"]
    assert remote.pushes() == [f"{sha} refs/heads/signoff/task-{task_id}"]
    assert github.creations == 1 and done.result is not None
    assert done.result["approved_by"] == "alice"
    assert TOKEN not in out.read_text()  # the token is never logged

    stats = json.loads(await asyncio.to_thread(_cli, dsn, "stats", CAPABILITY, "--json"))
    assert stats["by_status"] == {"succeeded": 1}
    for stage in ("prepared", "agent_ran", "committed", "tested", "parked", "approved",
                  "push_started", "pushed", "pr_opened", "done"):
        assert stats["stages"].get(stage) == 1, (stage, stats["stages"])


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()
