"""Signals: incident (claimable work nobody takes), nudge (questions nobody answers), context."""

from __future__ import annotations

from taskqueue import Reaper, SignalConfig, TaskQueue, read_signals

from ..factories import CAP, backdate, claimed, enqueue, parked, sql


async def _waiting(queue: TaskQueue, n: int, hours: float, capability: str = CAP) -> list[int]:
    """n pending tasks that became claimable `hours` ago."""
    ids = [await enqueue(queue, capability) for _ in range(n)]
    await sql(queue, "UPDATE tasks SET created_at = now() - make_interval(secs => %s), "
                     "run_after = now() - make_interval(secs => %s) WHERE id = ANY(%s)",
              hours * 3600, hours * 3600, ids)
    return ids


async def _unanswered(queue: TaskQueue, n: int, hours: float) -> None:
    for _ in range(n):
        await parked(queue)
    await backdate(queue, "approvals", "created_at", f"{hours} hours")


async def test_signals_of_an_empty_queue_are_quiet(queue: TaskQueue) -> None:
    signals = await read_signals(queue)
    assert not signals.incident.firing and not signals.nudge.firing
    assert (signals.incident.count, signals.nudge.count) == (0, 0)
    assert (signals.expired_approvals, signals.failed_last_day, signals.open_approvals) == (
        0, 0, 0)
    assert signals.reaper_at is None and signals.reaper_outcome is None
    doc = signals.to_json()
    assert doc["reaper"] == {"at": None, "outcome": None}
    for name in ("incident", "nudge"):
        assert {"firing", "count", "threshold", "age_hours"} <= set(doc[name])


async def test_incident_fires_with_more_than_five_tasks_unclaimed_over_six_hours(
        queue: TaskQueue) -> None:
    await _waiting(queue, 5, 7)
    await _waiting(queue, 3, 5)
    signals = await read_signals(queue)
    assert (signals.incident.firing, signals.incident.count) == (False, 5)
    await _waiting(queue, 1, 6.5)
    signals = await read_signals(queue)
    assert (signals.incident.firing, signals.incident.count) == (True, 6)
    assert signals.incident.threshold == 5 and signals.incident.age_hours == 6
    assert 6.9 < signals.incident.oldest_age_hours < 7.1
    assert signals.incident.owner == "system"


async def test_incident_counts_age_from_when_a_task_became_claimable(queue: TaskQueue) -> None:
    ids = await _waiting(queue, 6, 7)
    await sql(queue, "UPDATE tasks SET run_after = now() - interval '1 hour' WHERE id = %s",
              ids[0])
    assert (await read_signals(queue)).incident.count == 5


async def test_incident_ignores_running_and_finished_tasks(queue: TaskQueue) -> None:
    await _waiting(queue, 6, 7)
    task = await queue.task_claim(CAP, "w1")
    assert task is not None
    await queue.task_complete(task.id, "w1", claim=task.claim)
    await queue.task_claim(CAP, "w1")
    assert (await read_signals(queue)).incident.count == 4


async def test_incident_ignores_new_work_held_by_a_full_max_parked(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_parked=1)
    await parked(queue)
    await _waiting(queue, 6, 7)
    assert (await read_signals(queue)).incident.count == 0
    await _waiting(queue, 6, 7, capability="other")
    assert (await read_signals(queue)).incident.firing


async def test_incident_still_counts_resumed_work_when_max_parked_is_full(
        queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_parked=1)
    await parked(queue)
    ids = await _waiting(queue, 6, 7)
    await sql(queue, "UPDATE tasks SET first_claimed_at = now() - interval '8 hours' "
                     "WHERE id = ANY(%s)", ids)
    assert (await read_signals(queue)).incident.firing


async def test_incident_ignores_new_work_held_by_a_full_daily_new(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, daily_new=1)
    await claimed(queue)
    await _waiting(queue, 6, 7)
    assert (await read_signals(queue)).incident.count == 0


async def test_nudge_fires_with_more_than_five_approvals_open_over_a_day(
        queue: TaskQueue) -> None:
    await _unanswered(queue, 5, 25)
    signals = await read_signals(queue)
    assert (signals.nudge.firing, signals.nudge.count, signals.open_approvals) == (False, 5, 5)
    await parked(queue)
    assert (await read_signals(queue)).nudge.count == 5
    await _unanswered(queue, 0, 25)
    signals = await read_signals(queue)
    assert (signals.nudge.firing, signals.nudge.count) == (True, 6)
    assert signals.nudge.owner == "human" and signals.nudge.threshold == 5


async def test_nudge_ignores_answered_approvals(queue: TaskQueue) -> None:
    await _unanswered(queue, 6, 25)
    task_id = await sql(queue, "SELECT task_id FROM approvals ORDER BY id LIMIT 1")
    await queue.approval_decide_for_task(task_id[0]["task_id"], "approved", "alice")
    assert (await read_signals(queue)).nudge.count == 5


async def test_signals_report_expired_approvals_and_recent_failures(queue: TaskQueue) -> None:
    _, approval = await parked(queue)
    await backdate(queue, "approvals", "expires_at", "1 s", "id = %s", approval.id)
    for error in ("one", "two"):
        task = await claimed(queue)
        await queue.task_fail(task.id, "w1", error, claim=task.claim, retry=False)
    old = await claimed(queue)
    await queue.task_fail(old.id, "w1", "old", claim=old.claim, retry=False)
    await backdate(queue, "tasks", "finished_at", "2 days", "id = %s", old.id)
    await Reaper(queue).run_once()
    signals = await read_signals(queue)
    assert (signals.expired_approvals, signals.failed_last_day) == (1, 2)
    assert signals.reaper_outcome == {"requeued": 0, "orphans_requeued": 0, "failed": 0,
                                      "expired": 1}
    assert signals.to_json()["reaper"]["outcome"]["expired"] == 1


async def test_signal_thresholds_are_configurable(queue: TaskQueue) -> None:
    await _unanswered(queue, 1, 2)
    await _waiting(queue, 1, 2)
    config = SignalConfig(incident_count=0, incident_age_hours=1, nudge_count=0,
                          nudge_age_hours=1)
    signals = await read_signals(queue, config)
    assert signals.incident.firing and signals.nudge.firing
    assert (signals.incident.threshold, signals.incident.age_hours) == (0, 1)
    assert not (await read_signals(queue)).incident.firing


async def test_queue_summary_counts_live_tasks_by_capability_and_status(
        queue: TaskQueue) -> None:
    await _waiting(queue, 2, 3)
    await parked(queue, "other")
    done = await claimed(queue, "third")
    await queue.task_complete(done.id, "w1", claim=done.claim)
    summary = {(r["capability"], r["status"]): r["n"] for r in await queue.queue_summary()}
    assert summary == {(CAP, "pending"): 2, ("other", "needs_approval"): 1,
                       ("third", "succeeded"): 1}
    [pending] = [r for r in await queue.queue_summary() if r["status"] == "pending"]
    assert pending["oldest_waiting_since"] is not None
