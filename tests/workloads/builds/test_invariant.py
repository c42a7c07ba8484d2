"""THE INVARIANT: no publish without a person's approve of that exact artifact, at most one
publish per task, and a finished build is never built again, whatever point the worker
dies at: in-process at every named point, and as real `signoff worker` processes killed
with SIGKILL mid-build and mid-publish, recovered through a short lease and the reaper.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from taskqueue import Handler, Reaper, Task, TaskQueue
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status
from tests.workloads.crash_counting import Crasher, run_to_the_end
from workloads.builds.checkpoints import CRASH_DIR_ENV, CRASH_ENV, POINTS
from workloads.builds.handler import make_handler
from workloads.builds.ios import TestFlight
from workloads.builds.roblox import OpenCloud
from workloads.builds.settings import BuildSettings

from .conftest import FAKE_BUILD, Repo, builds_started
from .fake_open_cloud import KEY, FakeOpenCloud
from .flow import assert_published_only_approved

pytestmark = pytest.mark.slow
CAP = "roblox_build"


class Target:
    """Where a platform publishes: its handler and the checksums it published so far."""

    def __init__(self, platform: str, cloud: FakeOpenCloud, tmp_path: Path,
                 roblox: Callable[..., BuildSettings], ios: Callable[..., BuildSettings]) -> None:
        self.platform, self.cloud, self.uploads = platform, cloud, tmp_path / "uploads.count"
        self.capability = "roblox_build" if platform == "roblox" else "ios_build"
        self.settings, self.publisher = (roblox(), OpenCloud()) if platform == "roblox" \
            else (ios(), TestFlight())

    def handler(self, crasher: Crasher) -> Handler:
        return make_handler(self.settings, self.publisher, checkpoint=crasher)

    def published(self) -> list[str]:
        if self.platform == "roblox":
            return [p.sha256 for p in self.cloud.published]
        lines = self.uploads.read_text().splitlines() if self.uploads.exists() else []
        return [json.loads(line)["sha256"] for line in lines]


async def _answer(queue: TaskQueue, target: Target, task_id: int, before: int) -> None:
    """A truthful person: approve the publish; asked "upload again?", say what is live."""
    task = await queue.task_get(task_id)
    assert task.approval is not None and task.approval.request["kind"] == "build_publish"
    if task.approval.request["step"] == "publish" or len(target.published()) == before:
        await queue.approval_decide_for_task(task_id, "approved", "alice")
    else:
        await queue.approval_decide_for_task(task_id, "revised", "alice", "it is live")


async def _run_to_the_end(queue: TaskQueue, target: Target, crasher: Crasher, task_id: int,
                          before: int = 0) -> None:
    async def check() -> None:
        published = await assert_published_only_approved(queue, target.published(),
                                                         *range(1, task_id + 1))
        assert published - before <= 1

    async def answer(task: Task) -> None:
        await _answer(queue, target, task_id, before)

    await run_to_the_end(queue, target.handler(crasher), target.capability, task_id, crasher,
                         check=check, answer=answer)


@pytest.mark.parametrize("platform", ["roblox", "ios"])
async def test_a_worker_dying_at_any_point_publishes_once_and_builds_once_more_at_most(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path, platform: str,
        roblox_settings: Callable[..., BuildSettings],
        ios_settings: Callable[..., BuildSettings]) -> None:
    target = Target(platform, cloud, tmp_path, roblox_settings, ios_settings)
    everywhere = [p for p in POINTS if p != "publish.end"]
    crasher = Crasher(everywhere)
    first = (await queue.task_enqueue(target.capability, repo.payload(), max_attempts=50)).id
    await _run_to_the_end(queue, target, crasher, first)
    assert crasher.fired == everywhere
    assert len(target.published()) == 1
    # Only the death before the build's state was saved built again.
    assert builds_started(tmp_path) == 2
    result = (await queue.task_get(first)).result
    assert result is not None and result["confirmed_by"] == "alice"

    crasher = Crasher(["publish.end"])  # the result was saved: no need to ask
    second = (await queue.task_enqueue(target.capability, repo.payload(repo.first),
                                       max_attempts=50)).id
    await _run_to_the_end(queue, target, crasher, second, before=1)
    assert crasher.fired == ["publish.end"] and len(target.published()) == 2
    result = (await queue.task_get(second)).result
    assert result is not None and result["confirmed_by"] is None
    assert await assert_published_only_approved(queue, target.published(), first, second) == 2


def _config(tmp_path: Path, cloud: FakeOpenCloud, mode: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(f"""
[workloads.roblox_build]
command = ["{sys.executable}", "{FAKE_BUILD}", "{mode}", "{{output}}/place.rbxl",
           "{tmp_path / 'builds.count'}"]
work_dir = "{tmp_path / 'work'}"
store = "{tmp_path / 'store'}"
base_url = "{cloud.url}"
universe_id = 111
place_id = 222
timeout_seconds = 30
""")
    return path


def _spawn(dsn: str, config: Path, crash_dir: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
           "SIGNOFF_CONFIG": str(config), "SIGNOFF_ROBLOX_API_KEY": KEY,
           CRASH_ENV: "publish.sent", CRASH_DIR_ENV: str(crash_dir)}
    cmd = [sys.executable, "-m", "taskqueue", "worker", "--capability", CAP, "--handler",
           "workloads.builds.roblox:handle", "--lease", "2", "--poll-interval", "0.2"]
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


async def _reaped(queue: TaskQueue) -> None:
    async def requeued() -> bool:
        return (await Reaper(queue).run_once()).requeued == 1

    await wait_for(requeued, timeout=10, every=0.3)


async def test_signoff_workers_killed_mid_build_and_mid_publish_publish_once(
        queue: TaskQueue, dsn: str, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path) -> None:
    config, crash_dir, log = _config(tmp_path, cloud, "slow"), tmp_path / "crashed", \
        tmp_path / "workers.log"
    crash_dir.mkdir()
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    workers = [_spawn(dsn, config, crash_dir, log)]
    try:
        await wait_for(lambda: _true(builds_started(tmp_path) == 1), timeout=15)
        workers[0].send_signal(signal.SIGKILL)  # mid-build
        assert await asyncio.to_thread(workers[0].wait) == -signal.SIGKILL
        workers.append(_spawn(dsn, config, crash_dir, log))
        await _reaped(queue)
        await wait_status(queue, task_id, "needs_approval", timeout=20)
        assert builds_started(tmp_path) == 2 and cloud.requests == 0
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        # It publishes, then dies (SIGKILL) before recording the result.
        assert await asyncio.wait_for(asyncio.to_thread(workers[1].wait), 20) == -9
        assert len(cloud.published) == 1
        workers.append(_spawn(dsn, config, crash_dir, log))
        await _reaped(queue)
        task = await wait_status(queue, task_id, "needs_approval", timeout=20)
        assert task.approval is not None and task.approval.request["step"] == "republish"
        await queue.approval_decide_for_task(task_id, "revised", "alice", "it is live")
        task = await wait_status(queue, task_id, "succeeded", timeout=20)
    finally:
        for w in workers:
            if w.poll() is None:
                w.terminate()
                await asyncio.to_thread(w.wait)
    assert len(cloud.published) == 1 and builds_started(tmp_path) == 2, log.read_text()
    assert await assert_published_only_approved(
        queue, [p.sha256 for p in cloud.published], task_id) == 1
    assert task.result is not None and task.result["confirmed_by"] == "alice"


async def _true(value: bool) -> bool:
    return value
