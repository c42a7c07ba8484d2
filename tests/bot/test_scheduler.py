"""The service's timetable: jobs triggered directly or on short intervals, never real minutes."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.scheduler import ServiceScheduler, previous_fire_time
from taskqueue import (
    CapabilityConfig,
    CapabilityRun,
    Config,
    ProducerConfig,
    ProducerJob,
    ReapReport,
    Status,
    TaskQueue,
    cron_next,
)
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.worker_helpers import wait_for

H = "tests.taskqueue.handlers_for_tests"


def config(cron: str = "30 2 * * *", **kwargs: object) -> Config:
    cap = CapabilityConfig("cv", f"{H}:quick", mode="tick", producers=(
        ProducerConfig("nightly", f"{H}:nightly", cron),))
    return Config(capabilities={"cv": cap}, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
async def sched(queue: TaskQueue) -> AsyncIterator[ServiceScheduler]:
    s = ServiceScheduler(queue, config(), worker="w-sched")
    yield s
    await s.stop(grace=1)


async def test_reaper_job_runs_and_logs_its_outcome(
        sched: ServiceScheduler, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    sched.add_reaper()
    report = await sched.run_job("reaper")
    assert isinstance(report, ReapReport) and report.requeued == 0
    assert "reaper ran requeued=0 orphans_requeued=0 failed=0 expired=0" in caplog.text


async def test_tick_claims_one_task_and_runs_one_slice(sched: ServiceScheduler,
                                                       queue: TaskQueue) -> None:
    sched.add_tick(CapabilityRun("cv", h.quick, 30), minutes=5)
    first = await queue.task_enqueue("cv", {"n": 1})
    second = await queue.task_enqueue("cv", {"n": 2})
    report = await sched.run_job("tick:cv")
    assert (report.task_id, report.outcome, report.status) == (first.id, "done",
                                                                Status.SUCCEEDED)
    assert (await queue.task_get(second.id)).status is Status.PENDING
    await sched.run_job("tick:cv")
    assert (await sched.run_job("tick:cv")).task_id is None


async def test_producers_are_idempotent_per_period(queue: TaskQueue) -> None:
    fired = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)
    one = ProducerJob(queue, "nightly", "cv", h.nightly)
    other = ProducerJob(queue, "nightly", "cv", h.nightly)  # a second service instance
    first = await one.run_once(fired)
    again = await other.run_once(fired + timedelta(hours=5))  # a late rerun, same day
    assert (first.period, first.created, first.existing, first.ran) == ("2026-12-01", 3, 0, True)
    # A period that ran is done: the second firing runs nothing and records no second report.
    assert (again.ran, again.created, again.existing) == (False, 0, 0)
    run = await queue.producer_run_get("cv", "nightly", "2026-12-01")
    assert run is not None and (run.created, run.existing) == (3, 0)
    tasks = await queue.task_list(capability="cv")
    assert sorted(t.dedupe_key or "" for t in tasks) == [
        "nightly:2026-12-01", "nightly:2026-12-01:a", "nightly:2026-12-01:b"]
    assert (await one.run_once(fired + timedelta(days=1))).created == 3


async def test_producer_job_uses_the_schedules_period(sched: ServiceScheduler,
                                                      queue: TaskQueue) -> None:
    sched.add_producers()
    report = await sched.run_job("producer:cv:nightly")
    trigger = CronTrigger.from_crontab("30 2 * * *", timezone=UTC)
    last = previous_fire_time(trigger, datetime.now(UTC), timedelta(hours=1))
    expected = (last or datetime.now(UTC)).date().isoformat()
    assert report.period == expected and report.created == 3


@pytest.mark.parametrize("cron", ["0 8 * * 1", "0 0 13 * 5", "0 8 * * 7", "@weekly"])
async def test_producers_fire_when_the_dry_run_says(queue: TaskQueue, cron: str) -> None:
    sched = ServiceScheduler(queue, config(cron), worker="w")
    sched.add_producers()
    [job] = sched.scheduler.get_jobs()
    after = datetime(2026, 12, 2, 10, 30, tzinfo=UTC)
    fires, fire = [], None
    for _ in range(5):
        fire = job.trigger.get_next_fire_time(fire, fire or after)
        fires.append(fire)
    assert fires == cron_next(cron, "UTC", 5, after)
    # The catch-up looks back along the same schedule: Sunday 2026-12-13 is the 13th.
    if cron == "0 0 13 * 5":
        assert previous_fire_time(job.trigger, datetime(2026, 12, 13, 1, tzinfo=UTC),
                                  timedelta(hours=2)) == datetime(2026, 12, 13, tzinfo=UTC)


def test_previous_fire_time_finds_the_last_missed_run() -> None:
    trigger = CronTrigger.from_crontab("30 2 * * *", timezone=UTC)
    now = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    assert previous_fire_time(trigger, now, timedelta(hours=12)) == datetime(
        2026, 12, 1, 2, 30, tzinfo=UTC)
    assert previous_fire_time(trigger, now, timedelta(hours=1)) is None


async def test_a_missed_cron_run_fires_once_at_start(queue: TaskQueue) -> None:
    sched = ServiceScheduler(queue, config(), worker="w")
    runs: list[float] = []

    async def body() -> None:
        runs.append(time.monotonic())

    # Hourly, at the minute just gone, with an hour of grace: the missed run fires once at
    # start, and the next real one is most of an hour away (none can fire while we look).
    minute = (datetime.now(UTC) - timedelta(minutes=1)).minute
    sched.add("hourly", body, CronTrigger.from_crontab(f"{minute} * * * *", timezone=UTC),
              catch_up=True)
    sched.start()
    await wait_for(lambda: _async(bool(runs)))
    await asyncio.sleep(1)  # room for a second run that must not come
    await sched.stop(grace=1)
    assert len(runs) == 1


async def test_ten_missed_runs_after_downtime_fire_once(queue: TaskQueue) -> None:
    sched = ServiceScheduler(queue, config(), worker="w")
    runs: list[float] = []

    async def body() -> None:
        runs.append(time.monotonic())

    # Every ten minutes; as if the service had been down for 95 of them: ten runs were due,
    # the last five minutes ago (within the hour's grace), the next is five minutes away.
    start = datetime.now(UTC) - timedelta(minutes=95)
    sched.add("every-ten", body, IntervalTrigger(minutes=10, start_date=start, timezone=UTC))
    sched.scheduler.modify_job("every-ten", next_run_time=start)
    sched.start()
    await wait_for(lambda: _async(bool(runs)))
    await asyncio.sleep(1)  # room for a second run that must not come
    await sched.stop(grace=1)
    assert len(runs) == 1


async def test_every_job_coalesces_with_a_misfire_grace(sched: ServiceScheduler) -> None:
    sched.add_reaper()
    sched.add_producers()
    sched.add_incident_check()
    sched.start()
    jobs = sched.scheduler.get_jobs()
    assert {j.id for j in jobs} == {"reaper", "producer:cv:nightly", "incident_check"}
    assert all(j.coalesce and j.misfire_grace_time == 3600 and j.max_instances == 1
               for j in jobs)


async def test_checks_run_at_the_configured_times(queue: TaskQueue) -> None:
    sched = ServiceScheduler(queue, config(digest_times=("08:15", "20:00"),
                                           signal_check_minutes=10), worker="w")
    sched.set_check("nudge_digest", _noop)
    sched.add_incident_check()
    triggers = {j.id: str(j.trigger) for j in sched.scheduler.get_jobs()}
    assert triggers["nudge_digest:08:15"] == "cron[hour='8', minute='15']"
    assert triggers["nudge_digest:20:00"] == "cron[hour='20', minute='0']"
    assert triggers["incident_check"] == "interval[0:10:00]"
    with pytest.raises(ValueError, match="unknown check"):
        sched.set_check("weather", _noop)


async def test_a_failing_job_logs_one_line_and_keeps_going(
        sched: ServiceScheduler, caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    job = ProducerJob(sched.queue, "broken", "cv", h.broken_producer)
    sched.add("producer:cv:broken", job.run_once, IntervalTrigger(minutes=5))
    assert await sched.run_job("producer:cv:broken") is None
    assert "job failed job=producer:cv:broken error=producer broke" in caplog.text


async def _noop() -> None:
    return None


async def _async(value: bool) -> bool:
    return value
