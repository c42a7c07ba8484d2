"""The handler through the worker runtime against real PostgreSQL and real git: park with the
commit and the patch, approve → one push and one pull request, revise, and the refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue import CapabilityRun, Status, Task, TaskQueue
from tests.taskqueue.worker_helpers import events, running_pool, wait_for, wait_status
from workloads.code_changes.handler import CAPABILITY, make_handler
from workloads.code_changes.settings import CodeSettings

from .agents import FAIL, HANG_ONCE, LOUD, NOTHING, PUSHY, TESTS_FAIL
from .conftest import Remote, payload, pid_alive, sh, with_agent
from .fake_github import FakeGitHub


def run_of(settings: CodeSettings, lease: float = 30) -> CapabilityRun:
    return CapabilityRun(CAPABILITY, make_handler(settings), lease)


async def test_approve_pushes_the_parked_commit_once_and_opens_one_pull_request(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, github: FakeGitHub) -> None:
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings)):
        parked = await wait_status(queue, task_id, "needs_approval", timeout=15)
        a = parked.approval
        assert a is not None
        req = a.request
        assert req["kind"] == "code_change" and req["branch"] == f"signoff/task-{task_id}"
        assert "CHANGES.md" in req["diffstat"] and req["files"][0]["path"] == "CHANGES.md"
        assert req["tests"] == {"ran": True, "passed": True, "exit_code": 0, "timed_out": False}
        assert parked.state["parked_sha"] == req["commit"]
        assert [att.filename for att in a.attachments] == [f"task-{task_id}.patch"]
        patch = (await queue.attachment_get(a.attachments[0].id)).data or b""
        assert b"+Add a greeting" in patch and b"junk.txt" not in patch
        assert remote.pushes() == [] and github.creations == 0  # nothing before the approve

        await queue.approval_decide_for_task(task_id, "approved", "alice")
        done = await wait_status(queue, task_id, "succeeded", timeout=15)
    assert remote.pushes() == [f"{req['commit']} refs/heads/signoff/task-{task_id}"]
    assert remote.branch_sha(f"signoff/task-{task_id}") == req["commit"]
    assert "Add a greeting" in remote.show(req["commit"], "CHANGES.md")
    author = sh("log", "-1", "--format=%an <%ae>", req["commit"], cwd=remote.path)
    assert author == "Signoff <signoff@localhost>"
    assert github.creations == 1 and github.refused == 0
    pull = github.pulls[0]
    assert (pull["head"], pull["base"], pull["repo"]) == (
        f"signoff/task-{task_id}", "main", "acme/widgets")
    assert done.result is not None and done.result["pr"]["number"] == 1
    assert done.result["approved_by"] == "alice" and done.result["commit"] == req["commit"]
    assert not (settings.workspace / "worktrees" / f"task-{task_id}").exists()


async def test_revise_runs_the_agent_again_with_the_note_and_parks_a_new_commit(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, github: FakeGitHub,
        tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "edit2",
                          (tmp_path / "agents" / "edit.py").read_text(),
                          test_command=("python3", "-c", TESTS_FAIL))
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings)):
        first = await wait_status(queue, task_id, "needs_approval", timeout=15)
        assert first.approval is not None
        assert first.approval.request["tests"]["passed"] is False
        assert "1 failed" in first.approval.request["tests_tail"]
        await queue.approval_decide_for_task(task_id, "revised", "alice", "Say it in <b>bold</b>")
        await wait_status(queue, task_id, "running", "pending", timeout=5)
        second = await wait_status(queue, task_id, "needs_approval", timeout=15)
        assert second.approval is not None and second.approval.id != first.approval.id
        old, new = first.approval.request["commit"], second.approval.request["commit"]
        assert old != new and second.approval.request["round"] == 2
        # Same branch, the new commit on top of the first one.
        assert sh("rev-parse", f"{new}~1", cwd=settings.workspace / "worktrees"
                  / f"task-{task_id}") == old
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        await wait_status(queue, task_id, "succeeded", timeout=15)
    text = remote.show(new, "CHANGES.md")
    assert "Revision request 1 from the reviewer:\nSay it in <b>bold</b>" in text
    assert remote.pushes() == [f"{new} refs/heads/signoff/task-{task_id}"]
    assert github.creations == 1


async def test_an_agent_that_changes_nothing_fails_the_task_for_good(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "nothing", NOTHING)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings)):
        task = await wait_status(queue, task_id, "failed", timeout=15)
    assert "changed nothing" in (task.last_error or "") and task.attempts == 1
    assert not (settings.workspace / "worktrees" / f"task-{task_id}").exists()
    assert remote.pushes() == []


async def test_a_failing_agent_is_retried_and_its_output_is_in_the_error(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "fail", FAIL)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id

    async def failed_once() -> Task | None:
        task = await queue.task_get(task_id)
        return task if task.last_error else None

    async with running_pool(queue, run_of(settings)):
        task = await wait_for(failed_once, timeout=15)
    assert task.status == Status.PENDING and task.attempts == 1, task  # retried later
    assert "exited with 3" in (task.last_error or "")
    assert "the model is unavailable" in (task.last_error or "")


async def test_bad_payloads_fail_without_retry(queue: TaskQueue, remote: Remote,
                                               settings: CodeSettings) -> None:
    bad = [
        {"repo": "ext::sh -c touch% /tmp/x", "base": "main", "instruction": "x"},
        {"repo": str(remote.path), "base": "--upload-pack=evil", "instruction": "x"},
        {"repo": str(remote.path), "base": "main", "instruction": "x" * 20481},
        {"repo": str(remote.path), "base": "main", "instruction": ""},
        {"repo": "relative/path", "base": "main", "instruction": "x"},
        {**payload(remote), "extra": 1},
    ]
    ids = [(await queue.task_enqueue(CAPABILITY, p)).id for p in bad]
    async with running_pool(queue, run_of(settings)):
        tasks = [await wait_status(queue, i, "failed", timeout=10) for i in ids]
    for task in tasks:
        assert task.attempts == 1 and (task.last_error or "").startswith("bad payload:"), task


async def test_a_branch_moved_after_the_park_is_parked_again_not_pushed(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, github: FakeGitHub) -> None:
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings)):
        first = await wait_status(queue, task_id, "needs_approval", timeout=15)
        worktree = settings.workspace / "worktrees" / f"task-{task_id}"
        (worktree / "sneaky.txt").write_text("added after the park\n")
        sh("add", "-A", cwd=worktree)
        sh("commit", "-q", "-m", "sneaky", cwd=worktree)
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        await wait_status(queue, task_id, "running", "pending", timeout=5)
        again = await wait_status(queue, task_id, "needs_approval", timeout=15)
        assert again.approval is not None and first.approval is not None
        assert again.approval.id != first.approval.id
        assert "sneaky.txt" in again.approval.request["diffstat"]
        assert "moved" in again.approval.request["note"]
        assert remote.pushes() == [] and github.creations == 0
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        await wait_status(queue, task_id, "succeeded", timeout=15)
    assert remote.pushes() == [f"{again.approval.request['commit']} "
                               f"refs/heads/signoff/task-{task_id}"]



async def test_a_loud_agent_is_logged_to_a_file_and_only_its_tail_is_kept(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "loud", LOUD, test_command=())
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings)):
        await wait_status(queue, task_id, "needs_approval", timeout=20)
    log = settings.workspace / "runs" / f"task-{task_id}" / "agent-1.log"
    assert log.stat().st_size > 50 * 1024 * 1024
    ran = [e.detail for e in await events(queue, task_id, "stage")
           if e.detail["stage"] == "agent_ran"]
    assert ran[0]["output_bytes"] > 50 * 1024 * 1024 and ran[0]["exit_code"] == 0


async def test_shutdown_while_the_agent_runs_kills_its_group_and_releases_the_task(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("HANG_PIDS", str(pids))
    monkeypatch.setenv("HANG_MARKER", str(tmp_path / "marker"))
    # Outside the sandbox: the test reads the agent's host pids (test_sandbox.py checks
    # that a sandboxed run leaves no process behind).
    settings = with_agent(settings, tmp_path / "agents", "hang", HANG_ONCE, sandbox=False,
                          sandbox_env=("HANG_PIDS", "HANG_MARKER"))
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings), grace=5):
        await wait_for(lambda: _exists(pids), timeout=15)
    agent, grandchild = (int(p) for p in pids.read_text().split())
    task = await queue.task_get(task_id)
    assert task.status == Status.PENDING and task.attempts == 0, task
    assert task.state["work_started"]["round"] == 1  # the next slice starts the round again
    assert not pid_alive(agent) and not pid_alive(grandchild)
    assert remote.pushes() == []


async def _exists(path: Path) -> bool:
    return path.exists() and bool(path.read_text())


async def test_an_agent_cannot_push_with_a_plain_git_push(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "pushy", PUSHY, test_command=())
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run_of(settings)):
        await wait_status(queue, task_id, "needs_approval", timeout=15)
    log = (settings.workspace / "runs" / f"task-{task_id}" / "agent-1.log").read_text()
    assert "push exit 128" in log, log
    assert remote.pushes() == [] and remote.branch_sha("sneaky") is None
