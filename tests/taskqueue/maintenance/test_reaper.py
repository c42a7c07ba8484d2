"""The reaper: rescues lapsed and stale-NULL leases, expires unanswered approvals, reports."""

from __future__ import annotations

import logging

import pytest

from taskqueue import Decision, Reaper, ReaperConfig, Status, TaskQueue, read_signals

from ..factories import CAP, backdate, claimed, in_threads, parked, sql, sync_rows, untouched_update

COUNTS = {"requeued", "orphans_requeued", "failed", "expired"}


async def _orphan(queue: TaskQueue, untouched_for: str) -> int:
    """A running task with a NULL lease (as older code wrote), not updated for a while."""
    task = await claimed(queue)
    await untouched_update(queue, "UPDATE tasks SET lease_expires_at = NULL, "
                                  "updated_at = now() - %s::interval WHERE id = %s",
                           untouched_for, task.id)
    return task.id


async def test_reaper_reports_every_count_even_when_all_are_zero(queue: TaskQueue) -> None:
    report = await Reaper(queue).run_once()
    assert (report.requeued, report.orphans_requeued, report.failed, report.expired) == (
        0, 0, 0, 0)
    assert report.task_ids == () and report.at is not None
    assert set(report.to_json()) >= COUNTS
    assert report.summary() == "requeued=0 orphans_requeued=0 failed=0 expired=0"


async def test_reaper_requeues_a_lapsed_lease_as_a_failed_attempt(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await queue.task_save_state(task.id, "w1", {"page": 2}, claim=task.claim)
    await backdate(queue, "tasks", "lease_expires_at", "1 s", "id = %s", task.id)
    report = await Reaper(queue).run_once()
    assert (report.requeued, report.task_ids) == (1, (task.id,))
    rescued = await queue.task_get(task.id)
    assert (rescued.status, rescued.attempts, rescued.state) == (Status.PENDING, 1, {"page": 2})
    assert rescued.worker is None and rescued.claim is None and rescued.lease_expires_at is None
    assert rescued.last_error is not None and "w1" in rescued.last_error
    event = (await queue.task_detail(task.id)).events[-1]
    assert (event.kind, event.actor, event.detail["to"]) == ("reaped", "reaper", "pending")
    again = await queue.task_claim(CAP, "w2")
    assert again is not None and again.id == task.id


async def test_reaper_leaves_a_live_lease_alone(queue: TaskQueue) -> None:
    task = await claimed(queue)
    assert (await Reaper(queue).run_once()).requeued == 0
    assert (await queue.task_get(task.id)).claim == task.claim


async def test_reaper_fails_a_task_past_max_attempts(queue: TaskQueue) -> None:
    task = await claimed(queue, max_attempts=2)
    await sql(queue, "UPDATE tasks SET attempts = 1, lease_expires_at = now() - interval '1 s'")
    report = await Reaper(queue).run_once()
    assert (report.requeued, report.failed) == (0, 1)
    dead = await queue.task_get(task.id)
    assert (dead.status, dead.attempts) == (Status.FAILED, 2)
    assert dead.finished_at is not None and dead.last_error is not None


async def test_reaper_requeues_a_stale_orphan_with_no_lease(queue: TaskQueue) -> None:
    task_id = await _orphan(queue, "2 hours")
    report = await Reaper(queue).run_once()
    assert (report.orphans_requeued, report.requeued, report.task_ids) == (1, 0, (task_id,))
    rescued = await queue.task_get(task_id)
    assert (rescued.status, rescued.attempts) == (Status.PENDING, 1)
    assert rescued.last_error is not None and "no lease" in rescued.last_error


async def test_reaper_leaves_a_fresh_orphan_with_no_lease_alone(queue: TaskQueue) -> None:
    task_id = await _orphan(queue, "10 minutes")
    report = await Reaper(queue).run_once()
    assert (report.orphans_requeued, report.requeued, report.failed) == (0, 0, 0)
    assert (await queue.task_get(task_id)).status is Status.RUNNING


async def test_reaper_orphan_age_is_configurable(queue: TaskQueue) -> None:
    task_id = await _orphan(queue, "10 minutes")
    report = await Reaper(queue, ReaperConfig(orphan_after=300)).run_once()
    assert report.orphans_requeued == 1
    assert (await queue.task_get(task_id)).status is Status.PENDING


async def test_a_plain_update_of_an_orphan_counts_as_fresh(queue: TaskQueue) -> None:
    # updated_at is kept by a trigger, so any write makes the row young again.
    task_id = await _orphan(queue, "2 hours")
    await sql(queue, "UPDATE tasks SET payload = '{\"x\": 1}' WHERE id = %s", task_id)
    assert (await Reaper(queue).run_once()).orphans_requeued == 0


async def test_reaper_expires_approvals_past_their_expiry(queue: TaskQueue) -> None:
    late_task, late = await parked(queue)
    fresh_task, _ = await parked(queue)
    answered_task, answered = await parked(queue)
    await queue.approval_decide_for_task(answered_task.id, Decision.APPROVED, "alice")
    await backdate(queue, "approvals", "expires_at", "1 s", "id IN (%s, %s)", late.id,
                   answered.id)
    report = await Reaper(queue).run_once()
    assert (report.expired, report.task_ids) == (1, (late_task.id,))
    assert (await queue.task_get(late_task.id)).status is Status.EXPIRED
    assert (await queue.approval_get(late.id)).decision is Decision.EXPIRED
    assert (await queue.task_get(fresh_task.id)).status is Status.NEEDS_APPROVAL
    assert (await queue.task_get(answered_task.id)).status is Status.APPROVED
    event = (await queue.task_detail(late_task.id)).events[-1]
    assert (event.kind, event.detail["approval_id"]) == ("expired", late.id)


async def test_reaper_records_its_run_for_the_signals(queue: TaskQueue) -> None:
    task = await claimed(queue)
    await backdate(queue, "tasks", "lease_expires_at", "1 s", "id = %s", task.id)
    report = await Reaper(queue).run_once()
    latest = await queue.reaper_run_latest()
    assert latest is not None and latest["at"] == report.at and latest["requeued"] == 1
    signals = await read_signals(queue)
    assert signals.reaper_at == report.at
    assert signals.reaper_outcome == {"requeued": 1, "orphans_requeued": 0, "failed": 0,
                                      "expired": 0}


async def test_reaper_logs_one_line_per_task(queue: TaskQueue,
                                             caplog: pytest.LogCaptureFixture) -> None:
    task = await claimed(queue)
    await backdate(queue, "tasks", "lease_expires_at", "1 s", "id = %s", task.id)
    with caplog.at_level(logging.INFO, logger="signoff.reaper"):
        await Reaper(queue).run_once()
    assert any(f"task={task.id}" in r.getMessage() for r in caplog.records)


def test_reapers_running_at_once_rescue_each_task_once(dsn: str) -> None:
    sync_rows(dsn, "INSERT INTO tasks (capability, status, worker, lease_expires_at) "
                   "SELECT %s, 'running', 'dead', now() - interval '1 s' "
                   "FROM generate_series(1, 50)", CAP)

    async def reap(q: TaskQueue, i: int) -> int:
        return (await Reaper(q).run_once()).requeued

    assert sum(in_threads(4, dsn, reap)) == 50
    rows = sync_rows(dsn, "SELECT attempts, count(*) AS n FROM tasks GROUP BY attempts")
    assert rows == [{"attempts": 1, "n": 50}]
