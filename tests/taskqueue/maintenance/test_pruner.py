"""Retention: the pruner deletes old finished tasks in batches and keeps the audit trail."""

from __future__ import annotations

import asyncio
from typing import Any

from taskqueue import Pruner, PrunerConfig, TaskQueue

from ..cli_helpers import Cli
from ..factories import CAP, approved_and_done, claimed, enqueue, sql, sync_rows, value


async def _age(queue: TaskQueue, task_id: int, days: int) -> None:
    await sql(queue, "UPDATE tasks SET finished_at = now() - make_interval(days => %s) "
                     "WHERE id = %s", days, task_id)


async def _finished(queue: TaskQueue, days: int, capability: str = CAP) -> int:
    task = await claimed(queue, capability)
    await queue.task_complete(task.id, "w1", claim=task.claim)
    await _age(queue, task.id, days)
    return task.id


async def _count(queue: TaskQueue, table: str) -> int:
    return int(await value(queue, f"SELECT count(*) FROM {table}"))


async def test_prunes_old_finished_tasks_in_batches_and_keeps_the_rest(
        queue: TaskQueue) -> None:
    old = [await _finished(queue, 40) for _ in range(5)]
    recent = await _finished(queue, 10)
    pending = await enqueue(queue)
    await sql(queue, "UPDATE tasks SET created_at = now() - interval '90 days', "
                     "updated_at = now() - interval '90 days' WHERE id = %s", pending)
    report = await Pruner(queue, PrunerConfig(batch=2)).run_once()
    assert (report.tasks, report.by_capability) == (5, {"*": 5})
    left = {r["id"] for r in await sql(queue, "SELECT id FROM tasks")}
    assert left == {recent, pending}
    assert int(await value(queue, "SELECT count(*) FROM task_events WHERE task_id = ANY(%s)",
                           old)) == 0


async def test_a_capability_keeps_its_own_age(queue: TaskQueue) -> None:
    kept = await _finished(queue, 40, "slow")
    gone = await _finished(queue, 40)
    short = await _finished(queue, 3, "fast")
    config = PrunerConfig(capabilities={"slow": 60, "fast": 2})
    report = await Pruner(queue, config).run_once()
    assert report.by_capability == {"fast": 1, "slow": 0, "*": 1}
    left = {r["id"] for r in await sql(queue, "SELECT id FROM tasks")}
    assert kept in left and gone not in left and short not in left


async def test_approved_work_keeps_its_decisions_but_loses_its_attachment_bytes(
        queue: TaskQueue) -> None:
    task_id = await approved_and_done(queue)
    await _age(queue, task_id, 40)
    report = await Pruner(queue).run_once()
    assert (report.tasks, report.attachments) == (0, 1)
    assert (await _count(queue, "approvals"), await _count(queue, "approval_attachments")) == (
        1, 0)
    await _age(queue, task_id, 400)
    assert (await Pruner(queue).run_once()).tasks == 1
    assert await _count(queue, "approvals") == 0


async def test_only_prunes_the_named_capability(queue: TaskQueue) -> None:
    await _finished(queue, 40)
    other = await _finished(queue, 40, "other")
    report = await Pruner(queue, PrunerConfig(days=30), only="other").run_once()
    assert report.by_capability == {"other": 1}
    assert await _count(queue, "tasks") == 1
    assert other not in {r["id"] for r in await sql(queue, "SELECT id FROM tasks")}


def test_signoff_prune_deletes_what_is_older_than_asked(dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    sync_rows(dsn, "INSERT INTO tasks (capability, status, finished_at) VALUES "
                   "(%s, 'succeeded', now() - interval '8 days'), "
                   "(%s, 'succeeded', now() - interval '2 days')", CAP, CAP)
    cli = Cli(dsn).fast
    assert cli.json("prune", "--older-than", "10", "--json")["tasks"] == 0
    report = cli.json("prune", "--older-than", "5", "--capability", CAP, "--json")
    assert (report["tasks"], report["by_capability"]) == (1, {CAP: 1})
    assert sync_rows(dsn, "SELECT count(*) AS n FROM tasks") == [{"n": 1}]
    assert "pruned 0 tasks" in cli.ok("prune")


async def test_pruning_a_task_deletes_its_notifications_and_keeps_the_taskless_ones(
        queue: TaskQueue) -> None:
    gone = await _finished(queue, 40)
    kept = await _finished(queue, 10)
    for task_id in (gone, kept, None):
        await queue.notification_send("Subject", f"about {task_id}", task_id=task_id)
    assert await queue.alert_state_change("queue_stuck", True, {"oldest_s": 900})
    await Pruner(queue).run_once()
    left = await sql(queue, "SELECT kind, task_id FROM notifications ORDER BY id")
    assert left == [{"kind": "message", "task_id": kept}, {"kind": "message", "task_id": None},
                    {"kind": "alert", "task_id": None}]


async def test_pruning_finds_a_task_s_notifications_through_the_task_index(dsn: str) -> None:
    """The foreign key's cascade looks notifications up by task_id; with the index it
    does not scan the outbox once per pruned task."""
    sync_rows(dsn, "INSERT INTO tasks (capability, status, finished_at) SELECT %s, "
                   "'succeeded', now() - interval '40 days' FROM generate_series(1, 200)", CAP)
    sync_rows(dsn, "INSERT INTO notifications (kind, task_id, body) SELECT 'message', id, "
                   "'{}' FROM tasks, generate_series(1, 20); ANALYZE notifications")
    async with TaskQueue.connect(dsn) as queue:
        assert (await Pruner(queue).run_once()).tasks == 200
    assert sync_rows(dsn, "SELECT count(*) AS n FROM notifications") == [{"n": 0}]
    assert await _index_scans(dsn, "notifications_task_idx") >= 200


async def _index_scans(dsn: str, index: str) -> int:
    """The index's scans, once the pruner's closed connections have flushed their statistics."""
    for _ in range(50):
        [row] = sync_rows(dsn, "SELECT idx_scan FROM pg_stat_user_indexes "
                               "WHERE indexrelname = %s", index)
        if row["idx_scan"]:
            return int(row["idx_scan"])
        await asyncio.sleep(0.1)
    return 0
