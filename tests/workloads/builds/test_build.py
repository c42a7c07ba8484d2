"""The build stage's edges: lease loss and dead workers' leftovers kill the build's group,
and a publish never happens without an approve of that exact artifact in the database."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from taskqueue import Status, TaskQueue
from tests.timing import WAIT
from tests.workloads.crash_counting import forced
from workloads.builds.build import PID_FILE, kill_leftover
from workloads.builds.handler import make_handler
from workloads.builds.roblox import OpenCloud
from workloads.builds.settings import BuildSettings, load_settings

from .conftest import Repo
from .fake_open_cloud import FakeOpenCloud
from .flow import backdate, reap_dead_worker, tick
from .test_process import gone

CAP = "roblox_build"


async def test_a_build_whose_lease_is_lost_is_killed_with_its_children(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings("hang"), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    running = asyncio.create_task(tick(queue, handler, lease=3))
    child_file = tmp_path / "work" / f"{CAP}-{task_id}" / "out" / "place.rbxlx.child"
    deadline = time.monotonic() + WAIT
    while not child_file.exists():
        assert time.monotonic() < deadline, "the build never started"
        await asyncio.sleep(0.05)
    await reap_dead_worker(queue)  # the lease lapsed: the task is someone else's now
    report = await asyncio.wait_for(running, WAIT)
    assert report.outcome == "lease_lost"
    assert await gone(int(child_file.read_text())), "the build outlived its lease"
    assert (await queue.task_get(task_id)).status == Status.PENDING


def test_a_build_left_running_by_a_dead_worker_is_killed_by_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "roblox_build-7"
    (folder / "src").mkdir(parents=True)
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              cwd=folder / "src", start_new_session=True)
    try:
        (folder / PID_FILE).write_text(f"{socket.gethostname()} {orphan.pid}\n")
        assert kill_leftover(folder)
        assert orphan.wait(5) == -9
        # An id that now belongs to a process working elsewhere is left alone.
        (folder / PID_FILE).write_text(f"{socket.gethostname()} {os.getpgid(0)}\n")
        assert not kill_leftover(folder)
        (folder / PID_FILE).write_text(f"another-host {orphan.pid}\n")
        assert not kill_leftover(folder)
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()


async def _refused(queue: TaskQueue, handler: object, task_id: int, reason: str) -> None:
    assert (await tick(queue, handler)).outcome == "failed"  # type: ignore[arg-type]
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and reason in (task.last_error or ""), task.last_error


async def test_the_publish_checks_the_approval_in_the_database_right_before_uploading(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings(), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    assert (await tick(queue, handler)).outcome == "parked"
    sha = (await queue.task_get(task_id)).state["parked_sha256"]
    # A state that says "publish" proves nothing: the question is still open.
    await backdate(queue, "UPDATE tasks SET status = 'pending', state = state || "
                          "jsonb_build_object('stage', 'publish', 'approved', "
                          "jsonb_build_object('sha256', %s::text)) WHERE id = %s", sha, task_id)
    await _refused(queue, handler, task_id, "the latest decision is none")
    await forced(queue, "UPDATE approvals SET decision = 'approved', decided_at = now() "
                          "WHERE task_id = %s", task_id)
    await queue.task_retry(task_id)
    await _refused(queue, handler, task_id, "the approval names no person")
    await backdate(queue, "UPDATE approvals SET decided_by = 'alice', request = request || "
                          "'{\"sha256\": \"0000\"}' WHERE task_id = %s", task_id)
    await queue.task_retry(task_id)
    # An approve of another checksum: the file's checksum is not it, so it asks again.
    assert (await tick(queue, handler)).outcome == "parked"
    task = await queue.task_get(task_id)
    assert task.approval is not None and task.approval.request["sha256"] == sha
    assert "no longer matched the approved one (000" in task.approval.request["warning"]
    assert cloud.requests == 0


async def test_a_bad_payload_or_setting_fails_for_good(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings(), OpenCloud())
    bad = (await queue.task_enqueue(CAP, {"repository": str(repo.path), "commit": "HEAD"})).id
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(bad)
    assert task.status == Status.FAILED and "full hexadecimal" in (task.last_error or "")

    config = tmp_path / "bad.toml"
    config.write_text('[workloads.roblox_build]\ncommand = "rojo build"\n')
    handler = make_handler(lambda: load_settings(CAP, config), OpenCloud())
    other = (await queue.task_enqueue(CAP, repo.payload())).id
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(other)
    assert task.status == Status.FAILED and "never a shell string" in (task.last_error or "")


async def test_a_symlink_out_of_the_output_folder_is_not_collected(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    secret = tmp_path / "secret.rbxl"
    secret.write_text("not yours")
    link = (sys.executable, "-c", "import os, sys; os.symlink(sys.argv[1], sys.argv[2])",
            str(secret), "{output}/place.rbxl")
    handler = make_handler(roblox_settings(command=link), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(task_id)
    assert "produced no file matching" in (task.last_error or "")
    assert not list((tmp_path / "store").rglob("*")) or \
        all(p.is_dir() for p in (tmp_path / "store").rglob("*"))
