"""The daily producer: one briefing per day, also across restarts, and a missed day's later."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pytest

from taskqueue import ConfigError, ProducerJob, Status, TaskQueue, load_config
from tests.taskqueue.worker_helpers import run_of, running_pool, wait_status
from workloads.briefing.handler import handle
from workloads.briefing.producer import check_config, daily

from .flow import messages
from .seed import CAP, write_config


def _job(queue: TaskQueue, runner: str) -> ProducerJob:
    return ProducerJob(queue, "daily", CAP, daily, timezone="UTC", runner=runner)


async def test_a_restart_the_same_day_enqueues_nothing(queue: TaskQueue, today: date) -> None:
    fired = datetime.combine(today, time(7, 30), UTC)
    first = await _job(queue, "service-1").run_once(fired)
    # The service restarts (a new ProducerJob) and fires again the same day.
    again = await _job(queue, "service-2").run_once(fired + timedelta(hours=2))

    assert (first.ran, first.created, first.period) == (True, 1, today.isoformat())
    assert not again.ran and again.created == 0
    [task] = await queue.task_list(capability=CAP)
    assert task.payload == {"day": today.isoformat(), "title": f"Daily briefing {today}"}
    assert task.dedupe_key == f"daily:{today}"
    assert first.report is not None and first.report["task_id"] == task.id


async def test_a_missed_day_is_produced_later_and_covers_its_own_yesterday(
        queue: TaskQueue, config_file: Path, today: date) -> None:
    await _job(queue, "service").run_once(datetime.combine(today, time(7, 30), UTC))
    missed = today - timedelta(days=2)
    # The service was down that whole day: `signoff produce briefing --period DAY`.
    late = await _job(queue, "cli:daily").run_once(period=missed.isoformat())

    assert late.ran and late.created == 1
    tasks = {t.payload["day"]: t.id for t in await queue.task_list(capability=CAP)}
    assert set(tasks) == {today.isoformat(), missed.isoformat()}
    async with running_pool(queue, run_of(handle, CAP)):
        done = await wait_status(queue, tasks[missed.isoformat()], Status.SUCCEEDED)
        await wait_status(queue, tasks[today.isoformat()], Status.SUCCEEDED)
    assert done.result is not None
    assert done.result["covers"] == (missed - timedelta(days=1)).isoformat()
    assert len(await messages(queue)) == 2  # one per day


def test_the_producer_refuses_a_period_other_than_day(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace('cron = "30 7 * * *"',
                                             'cron = "30 7 * * *"\nperiod = "hour"'))
    with pytest.raises(ConfigError, match="briefing runs per day, not per hour"):
        check_config(load_config(path, imports=False))
    check_config(load_config(write_config(tmp_path), imports=False))
