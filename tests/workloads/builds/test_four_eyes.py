"""builds with `publish_approvals = 2`: the publish waits for a second person's approve;
one approve never reaches Open Cloud or the upload command, and the default still publishes
on one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from taskqueue import Status, TaskQueue
from workloads.builds.handler import make_handler
from workloads.builds.ios import TestFlight
from workloads.builds.roblox import OpenCloud
from workloads.builds.settings import BuildSettings

from .conftest import Repo, builds_started
from .fake_open_cloud import FakeOpenCloud
from .flow import tick


def _uploads(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "uploads.count"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_a_roblox_publish_needs_two_people_when_configured(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings], tmp_path: Path) -> None:
    handler = make_handler(roblox_settings(publish_approvals=2), OpenCloud())
    task_id = (await queue.task_enqueue("roblox_build", repo.payload(repo.first))).id
    assert (await tick(queue, handler)).outcome == "parked"
    parked = await queue.task_get(task_id)
    assert parked.approval is not None and parked.approval.required == 2
    once = await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert once.is_open and once.progress() == \
        "Approved by alice (1 of 2): waiting for a second person"
    assert (await tick(queue, handler)).task_id is None  # nothing to claim on one approve
    assert cloud.requests == 0 and cloud.published == []
    await queue.approval_decide_for_task(task_id, "approved", "bob")
    assert (await tick(queue, handler)).outcome == "done"
    task = await queue.task_get(task_id)
    assert task.status is Status.SUCCEEDED and task.result is not None
    assert task.result["approved_by"] == "bob"
    assert len(cloud.published) == 1 and builds_started(tmp_path) == 1


async def test_an_ios_upload_needs_two_people_and_the_default_needs_one(
        queue: TaskQueue, repo: Repo, tmp_path: Path,
        ios_settings: Callable[..., BuildSettings]) -> None:
    two = make_handler(ios_settings(publish_approvals=2), TestFlight())
    task_id = (await queue.task_enqueue("ios_build", repo.payload())).id
    assert (await tick(queue, two, "ios_build")).outcome == "parked"
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert (await tick(queue, two, "ios_build")).task_id is None
    assert _uploads(tmp_path) == []
    await queue.approval_decide_for_task(task_id, "approved", "bob")
    assert (await tick(queue, two, "ios_build")).outcome == "done"
    assert len(_uploads(tmp_path)) == 1

    one = make_handler(ios_settings(), TestFlight())  # publish_approvals defaults to 1
    other = (await queue.task_enqueue("ios_build", repo.payload(), dedupe_key="again")).id
    assert (await tick(queue, one, "ios_build")).outcome == "parked"
    parked = await queue.task_get(other)
    assert parked.approval is not None and parked.approval.required == 1
    await queue.approval_decide_for_task(other, "approved", "alice")
    assert (await tick(queue, one, "ios_build")).outcome == "done"
    assert len(_uploads(tmp_path)) == 2
