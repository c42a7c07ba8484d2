"""roblox_build end to end in one process: build, park, approve, publish to (fake) Open Cloud."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

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
    tail = (await queue.attachment_get(log.id)).data or b""
    assert b"source: first version" in tail and b"wrote place.rbxlx" in tail

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


async def test_a_4xx_fails_for_good_with_a_bounded_message_and_publishes_nothing(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings(), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    await _parked(queue, handler, task_id)
    cloud.script.append((403, {}, '{"message": "Forbidden: key lacks universe-places:write"}'
                         + "\x1b[31m" + "y" * 5000))
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and task.last_error is not None
    assert "Open Cloud answered 403" in task.last_error and "universe-places" in task.last_error
    assert len(task.last_error) < 400 and "\x1b" not in task.last_error
    assert cloud.published == [] and "publish_started" not in task.state


async def test_a_wrong_key_is_a_401_and_429_and_5xx_are_retried_after_retry_after(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud, monkeypatch: pytest.MonkeyPatch,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings(retry_after_cap=30), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    await _parked(queue, handler, task_id)
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    cloud.script += [(429, {"Retry-After": "7"}, "slow down"), (503, {"Retry-After": "3600"},
                                                                 "unavailable")]
    for wanted in (7, 30):  # Retry-After is honoured, up to the cap
        report = await tick(queue, handler)
        assert report.outcome == "released", report
        task = await queue.task_get(task_id)
        assert wanted - 1 < (task.run_after - task.updated_at).total_seconds() <= wanted
        assert task.state["publish_retries"] == 1 + (wanted == 30)
        assert "publish_started" not in task.state
        await ready(queue)
    assert (await tick(queue, handler)).outcome == "done"
    assert cloud.requests == 3 and len(cloud.published) == 1

    other = (await queue.task_enqueue(CAP, repo.payload(repo.first))).id
    await _parked(queue, handler, other)
    await queue.approval_decide_for_task(other, "approved", "alice")
    monkeypatch.setenv("SIGNOFF_ROBLOX_API_KEY", "wrong-key")
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(other)
    assert task.last_error is not None and "401" in task.last_error
    assert "wrong-key" not in task.last_error and len(cloud.published) == 1


async def test_a_changed_artifact_parks_again_instead_of_uploading(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings(), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    first = await _parked(queue, handler, task_id)
    task = await queue.task_get(task_id)
    stored = Path(task.state["build"]["artifact"]["path"])
    stored.chmod(0o644)
    stored.write_text("<roblox>tampered</roblox>\n")
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert (await tick(queue, handler)).outcome == "parked"
    task = await queue.task_get(task_id)
    assert task.approval is not None and cloud.requests == 0
    second = task.approval.request
    assert second["sha256"] != first["sha256"]
    assert "no longer matched the approved one" in second["warning"]
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert (await tick(queue, handler)).outcome == "done"
    assert [p.sha256 for p in cloud.published] == [second["sha256"]]


async def test_revise_builds_again_and_the_new_artifact_needs_its_own_approve(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud, tmp_path: Path,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings(), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    await _parked(queue, handler, task_id)
    await queue.approval_decide_for_task(task_id, "revised", "alice", "flaky asset, rebuild")
    assert (await tick(queue, handler)).outcome == "parked"
    assert builds_started(tmp_path) == 2 and cloud.requests == 0
    events = [e.detail.get("stage") for e in (await queue.task_detail(task_id)).events
              if e.kind == "stage"]
    assert "rebuild_requested" in events and events.count("built") == 2


async def test_a_failing_build_fails_with_its_last_lines_and_never_parks(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(roblox_settings("fail"), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    assert (await tick(queue, handler)).outcome == "failed"
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and task.last_error is not None
    assert "exited with 3" in task.last_error and "Main.swift" in task.last_error
    assert task.approval is None


async def test_the_request_renders_escaped_through_the_bot(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    evil = repo.commit("<b>bold</b> & <script>")
    handler = make_handler(roblox_settings(), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload(evil, branch="main"))).id
    request = await _parked(queue, handler, task_id)
    task = await queue.task_get(task_id)
    assert task.approval is not None
    text = render_approval(task.approval, CAP).text
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "&lt;b&gt;bold&lt;/b&gt; &amp;" in text  # the build log's tail, escaped
    assert str(request["sha256"]) in text and "place.rbxlx" in text
    assert "Roblox place 222 (universe 111)" in text and evil in text


async def test_no_connection_is_retried_but_a_lost_answer_asks_before_uploading_again(
        queue: TaskQueue, repo: Repo, cloud: FakeOpenCloud,
        roblox_settings: Callable[..., BuildSettings]) -> None:
    nowhere = make_handler(roblox_settings(base_url="http://127.0.0.1:9"), OpenCloud())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    await _parked(queue, nowhere, task_id)
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    assert (await tick(queue, nowhere)).outcome == "released"
    assert "publish_started" not in (await queue.task_get(task_id)).state
    await ready(queue)

    handler = make_handler(roblox_settings(), OpenCloud())
    cloud.script.append((0, {}, ""))  # published, then the connection drops
    assert (await tick(queue, handler)).outcome == "parked"
    task = await queue.task_get(task_id)
    assert task.approval is not None and task.approval.request["step"] == "republish"
    assert "ServerDisconnectedError" in task.approval.request["warning"]
    assert len(cloud.published) == 1
    await queue.approval_decide_for_task(task_id, "revised", "alice", "version 1 is live")
    assert (await tick(queue, handler)).outcome == "done"
    task = await queue.task_get(task_id)
    assert task.result is not None and task.result["confirmed_by"] == "alice"
    assert task.result["published"] == {"unconfirmed": True, "note": "version 1 is live"}
    assert len(cloud.published) == 1
