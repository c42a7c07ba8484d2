"""ios_build with stand-ins: an .ipa built, parked, uploaded once by the TestFlight command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from taskqueue import Status, TaskQueue
from workloads.builds.handler import make_handler
from workloads.builds.ios import TestFlight
from workloads.builds.settings import BuildSettings

from .conftest import ASC, Repo
from .flow import tick

CAP = "ios_build"


def _uploads(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "uploads.count"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def _approve_parked(queue: TaskQueue, handler: object, task_id: int) -> dict[str, object]:
    assert (await tick(queue, handler, CAP)).outcome == "parked"  # type: ignore[arg-type]
    task = await queue.task_get(task_id)
    assert task.approval is not None
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    return task.approval.request


async def test_an_ipa_is_uploaded_once_with_the_key_in_the_environment_only(
        queue: TaskQueue, repo: Repo, tmp_path: Path,
        ios_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(ios_settings(), TestFlight())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    request = await _approve_parked(queue, handler, task_id)
    assert request["target"] == "TestFlight" and request["platform"] == "iOS"
    assert _uploads(tmp_path) == []
    assert (await tick(queue, handler, CAP)).outcome == "done"
    [upload] = _uploads(tmp_path)
    assert upload["sha256"] == request["sha256"]
    assert upload["key_id"] == ASC["SIGNOFF_ASC_KEY_ID"]
    assert upload["key_path"] == ASC["SIGNOFF_ASC_KEY_PATH"]
    assert not any(v in " ".join(upload["argv"]) for v in ASC.values())  # type: ignore[arg-type]
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED and task.result is not None
    assert "Successfully uploaded" in task.result["published"]["output"]
    # The key was never logged: not in the build's or the upload's log, nor the task.
    logs = "".join(p.read_text() for p in (tmp_path / "work").rglob("*.log"))
    assert logs and not any(v in logs for v in ASC.values())
    assert not any(v in json.dumps(task.to_json()) for v in ASC.values())


async def test_a_failing_upload_fails_without_a_marker_and_a_missing_key_uploads_nothing(
        queue: TaskQueue, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        ios_settings: Callable[..., BuildSettings]) -> None:
    handler = make_handler(ios_settings(upload=("fail",)), TestFlight())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    await _approve_parked(queue, handler, task_id)
    assert (await tick(queue, handler, CAP)).outcome == "failed"
    task = await queue.task_get(task_id)
    assert task.last_error is not None and "invalid provisioning profile" in task.last_error
    assert "publish_started" not in task.state

    monkeypatch.delenv("SIGNOFF_ASC_KEY_PATH")
    handler = make_handler(ios_settings(), TestFlight())
    other = (await queue.task_enqueue(CAP, repo.payload(repo.first))).id
    await _approve_parked(queue, handler, other)
    assert (await tick(queue, handler, CAP)).outcome == "failed"
    task = await queue.task_get(other)
    assert task.last_error is not None and "SIGNOFF_ASC_KEY_PATH" in task.last_error
    assert _uploads(tmp_path) == []


async def test_two_publishable_files_are_refused_as_ambiguous(
        queue: TaskQueue, repo: Repo, tmp_path: Path,
        ios_settings: Callable[..., BuildSettings]) -> None:
    both = (sys.executable, "-c", "import sys; [open(sys.argv[1] + n, 'w').write(n) "
            "for n in ('/A.ipa', '/B.ipa')]", "{output}")
    handler = make_handler(ios_settings(command=both), TestFlight())
    task_id = (await queue.task_enqueue(CAP, repo.payload())).id
    assert (await tick(queue, handler, CAP)).outcome == "failed"
    task = await queue.task_get(task_id)
    assert task.last_error is not None and "exactly one .ipa file, found 2" in task.last_error
