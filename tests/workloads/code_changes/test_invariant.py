"""THE INVARIANT: nothing is pushed without a person's approve of that exact commit, and at
most one push and one pull request per task, whatever point the worker dies at.

In-process, a checkpoint stops the slice forever at every named point (the test cancels it
and the reaper takes the task back); and for real, a `signoff worker` process is killed with
SIGKILL while the agent runs, and the agent's process group must not outlive the recovery.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from taskqueue import Decision, Reaper, Status, Task, TaskQueue
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status
from tests.workloads.crash_counting import Crasher, run_to_the_end
from workloads.code_changes.change import POINTS
from workloads.code_changes.handler import CAPABILITY, make_handler
from workloads.code_changes.settings import CodeSettings

from .agents import HANG_ONCE, write_agent
from .conftest import Remote, payload, pid_alive
from .fake_github import TOKEN, FakeGitHub


async def assert_invariant(queue: TaskQueue, remote: Remote, github: FakeGitHub,
                           task_id: int) -> None:
    """Every push is of a commit a person approved; at most one push and one PR."""
    pushes, detail = remote.pushes(), await queue.task_detail(task_id)
    approved = {a.request.get("commit") for a in detail.approvals
                if a.decision == Decision.APPROVED and (a.decided_by or "").strip()}
    assert len(pushes) <= 1, pushes
    for line in pushes:
        assert line.split()[0] in approved, (line, approved)
    assert github.creations <= 1


async def test_a_worker_dying_at_any_point_pushes_once_and_only_what_was_approved(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, github: FakeGitHub) -> None:
    crasher = Crasher(list(POINTS))
    handler = make_handler(settings, checkpoint=crasher)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote), max_attempts=30)).id

    async def check() -> None:
        await assert_invariant(queue, remote, github, task_id)

    async def approve(task: Task) -> None:
        await queue.approval_decide_for_task(task_id, "approved", "alice")

    await run_to_the_end(queue, handler, CAPABILITY, task_id, crasher, check=check,
                         answer=approve, limit=60)
    assert crasher.fired == list(POINTS)
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED and task.result is not None
    assert remote.pushes() == [f"{task.result['commit']} refs/heads/signoff/task-{task_id}"]
    assert github.creations == 1 and task.result["pr"]["number"] == 1
    # After the crash right after the push, the remote was asked instead of pushing again;
    # after the crash right after the pull request, the repeat got 422 and looked it up.
    stages = [e.detail["stage"] for e in (await queue.task_detail(task_id)).events
              if e.kind == "stage"]
    assert stages.count("pushed") == 1 and stages.count("push_found") == 1, stages
    assert github.posts == 2 and stages.count("pr_opened") == 1
    assert not (settings.workspace / "worktrees" / f"task-{task_id}").exists()


def _config(settings: CodeSettings, folder: Path) -> Path:
    gh = settings.github
    assert gh is not None
    argv = ", ".join(f'"{a}"' for a in settings.agent_command)
    path = folder / "signoff.toml"
    path.write_text(
        f'[workloads.code_changes]\nworkspace = "{settings.workspace}"\n'
        f"agent_command = [{argv}]\nagent_timeout_seconds = 60\n"
        # The test reads the agent's host pids and a file it writes under /tmp: outside the
        # sandbox (test_sandbox.py checks that a sandboxed run leaves no process behind).
        f'sandbox = false\nsandbox_env = ["HANG_PIDS", "HANG_MARKER"]\n'
        f'[workloads.code_changes.github]\napi_url = "{gh.api_url}"\nrepo = "acme/widgets"\n')
    return path


async def _true(value: bool) -> bool:
    return value


async def _requeued(queue: TaskQueue) -> bool:
    return (await Reaper(queue).run_once()).requeued == 1


def _spawn_worker(dsn: str, config: Path, env: dict[str, str], log: Path
                  ) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "taskqueue", "worker", "--capability", CAPABILITY,
           "--handler", "workloads.code_changes.handler:handle", "--config", str(config),
           "--lease", "4", "--poll-interval", "0.1"]
    full = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
            "SIGNOFF_GITHUB_TOKEN": TOKEN, **env}
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=full, stdout=out, stderr=subprocess.STDOUT)


async def test_kill_9_of_a_worker_while_the_agent_runs_recovers_and_pushes_once(
        queue: TaskQueue, dsn: str, remote: Remote, settings: CodeSettings,
        github: FakeGitHub, tmp_path: Path) -> None:
    pids_file, marker = tmp_path / "agent.pids", tmp_path / "hung-once"
    agents = tmp_path / "agents"
    config = _config(replace(settings, agent_command=write_agent(agents, "hang", HANG_ONCE)),
                     tmp_path)
    env = {"HANG_PIDS": str(pids_file), "HANG_MARKER": str(marker)}
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    log = tmp_path / "worker.log"
    first = _spawn_worker(dsn, config, env, log)
    try:
        await wait_for(lambda: _true(pids_file.exists()), timeout=20)
        agent, grandchild = (int(p) for p in pids_file.read_text().split())
        await asyncio.sleep(5)  # longer than the lease: heartbeats keep the task
        assert (await Reaper(queue).run_once()).requeued == 0
        first.send_signal(signal.SIGKILL)  # mid-stage: the agent is running
        assert await asyncio.to_thread(first.wait, 10) == -9
        # The agent itself dies with its parent (PDEATHSIG) ...
        await wait_for(lambda: _true(not pid_alive(agent)), timeout=5)
        assert (await queue.task_get(task_id)).status == Status.RUNNING
        # ... and the recovery (the 4 s lease lapses, the reaper) stops the rest of its group.
        await wait_for(lambda: _requeued(queue), timeout=10, every=0.2)
        second = _spawn_worker(dsn, config, env, log)
        try:
            parked = await wait_status(queue, task_id, "needs_approval", timeout=20)
            assert not pid_alive(grandchild), "the agent's process group outlived recovery"
            assert remote.pushes() == [] and github.creations == 0
            await queue.approval_decide_for_task(task_id, "approved", "alice")
            done = await wait_status(queue, task_id, "succeeded", timeout=20)
        finally:
            second.terminate()
            await asyncio.to_thread(second.wait, 10)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert parked.approval is not None
    sha = parked.approval.request["commit"]
    assert remote.pushes() == [f"{sha} refs/heads/signoff/task-{task_id}"], log.read_text()
    assert github.creations == 1 and done.result is not None
    assert not (settings.workspace / "worktrees" / f"task-{task_id}").exists()
    assert "ORPHAN_WAS_HERE" not in remote.show(sha, "CHANGES.md")
