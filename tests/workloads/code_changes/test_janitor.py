"""The janitor removes the worktrees and local branches of finished tasks (skipped, cancelled,
expired, …), and leaves unfinished tasks alone; it runs as a producer on the scheduler."""

from __future__ import annotations

from datetime import UTC, datetime

from taskqueue import CapabilityRun, ProducerJob, Reaper, TaskQueue
from tests.taskqueue.worker_helpers import running_pool, wait_status
from workloads.code_changes.handler import CAPABILITY, make_handler
from workloads.code_changes.janitor import janitor, run_janitor
from workloads.code_changes.settings import CodeSettings

from .conftest import Remote, payload, sh


def _branches(settings: CodeSettings) -> set[str]:
    mirror = next((settings.workspace / "mirrors").glob("*.git"))
    out = sh("for-each-ref", "--format=%(refname:strip=2)", "refs/heads/", cwd=mirror)
    return set(out.splitlines())


async def test_janitor_cleans_up_after_skipped_and_cancelled_tasks_only(
        queue: TaskQueue, remote: Remote, settings: CodeSettings) -> None:
    ids = [(await queue.task_enqueue(CAPABILITY, payload(remote, f"change {i}"))).id
           for i in range(3)]
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        for task_id in ids:
            await wait_status(queue, task_id, "needs_approval", timeout=15)
    skipped, cancelled, waiting = ids
    await queue.approval_decide_for_task(skipped, "skipped", "alice", "not now")
    await queue.task_cancel(cancelled, actor="alice")
    trees = settings.workspace / "worktrees"
    assert {p.name for p in trees.iterdir()} == {f"task-{i}" for i in ids}

    report = await run_janitor(queue, settings)
    assert sorted(report.worktrees) == [skipped, cancelled]
    assert sorted(report.branches) == [skipped, cancelled]
    assert {p.name for p in trees.iterdir()} == {f"task-{waiting}"}
    assert _branches(settings) == {f"signoff/task-{waiting}"}
    again = await run_janitor(queue, settings)
    assert again.worktrees == [] and again.branches == []


async def test_janitor_runs_as_a_producer_with_the_config_file(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path,
        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
        await wait_status(queue, task_id, "needs_approval", timeout=15)
    await queue.task_cancel(task_id)
    config = tmp_path / "signoff.toml"
    config.write_text(f'[workloads.code_changes]\nworkspace = "{settings.workspace}"\n')
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    job = ProducerJob(queue, "janitor", CAPABILITY, janitor, period="hour")
    report = await job.run_once(datetime.now(UTC))
    assert report.created == 0  # it enqueues nothing
    assert not (settings.workspace / "worktrees" / f"task-{task_id}").exists()
    assert _branches(settings) == set()


async def test_a_retried_expired_task_is_parked_again_and_pushes_after_the_janitor(
        queue: TaskQueue, remote: Remote, settings: CodeSettings) -> None:
    run = CapabilityRun(CAPABILITY, make_handler(settings), 30)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, run):
        first = await wait_status(queue, task_id, "needs_approval", timeout=15)
    async with queue.pool.connection() as conn:
        await conn.execute("UPDATE approvals SET expires_at = now() - interval '1 second' "
                           "WHERE task_id = %s", (task_id,))
    assert (await Reaper(queue).run_once()).expired == 1
    assert (await run_janitor(queue, settings)).branches == [task_id]
    await queue.task_retry(task_id)
    async with running_pool(queue, run):
        again = await wait_status(queue, task_id, "needs_approval", timeout=15)
        assert again.approval is not None and first.approval is not None
        assert again.approval.request["commit"] == first.approval.request["commit"]
        await queue.approval_decide_for_task(task_id, "approved", "alice")
        await wait_status(queue, task_id, "succeeded", timeout=15)
    assert remote.pushes() == [f"{again.approval.request['commit']} "
                               f"refs/heads/signoff/task-{task_id}"]
