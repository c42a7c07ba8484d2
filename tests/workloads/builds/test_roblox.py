"""roblox_build end to end in one process: build, park, approve, publish to (fake) Open Cloud."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from bot.telegram.render import render_approval
from taskqueue import Status, TaskQueue
from workloads.builds.handler import make_handler
from workloads.builds.roblox import OpenCloud
from workloads.builds.settings import BuildSettings

from .conftest import Repo, builds_started
from .fake_open_cloud import FakeOpenCloud
from .flow import ready, tick

CAP = "roblox_build"


async def _parked(queue: TaskQueue, handler: object, task_id: int) -> dict[str, object]:
    report = await tick(queue, handler)  # type: ignore[arg-type]
    assert report.outcome == "parked", report
    task = await queue.task_get(task_id)
    assert task.approval is not None
    return task.approval.request


async def test_a_build_parks_then_publishes_once_after_approve(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings], tmp_path: Path) -> None:
    handler = make_handler(roblox_settings(), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload(repo.first))).id
    request = await _parked(queue, handler, task_id)
    expected = hashlib.sha256(b"<roblox>first version</roblox>\n").hexdigest()
    assert request["sha256"] == expected and request["commit"] == repo.first
    assert request["artifact"] == {"name": "place.rbxlx", "size": 31, "sha256": expected}
    assert cloud.requests == 0
    detail = await queue.task_detail(task_id)
    log = detail.approvals[-1].attachments[0]
    assert log.filename == "build-log-tail.txt" and log.content_type.startswith("text/plain")

    await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert (await tick(queue, handler)).outcome == "done"
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED and task.result is not None
    assert task.result["published"]["versionNumber"] == 1
    assert task.result["approved_by"] == "alice"
    [published] = cloud.published
    assert (published.universe, published.place, published.version_type,
            published.content_type, published.sha256) == \
        ("111", "222", "Published", "application/xml", expected)
    assert builds_started(tmp_path) == 1
