"""The briefing's day is the config's: yesterday and the next runs in its time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from taskqueue import TaskQueue, load_config
from tests.taskqueue.factories import sql
from workloads.briefing.handler import compose, today

from .seed import write_config

NEW_YORK = ZoneInfo("America/New_York")


async def _done_at(queue: TaskQueue, title: str, at: datetime) -> None:
    await queue.task_enqueue("jobs", {"title": title})
    task = await queue.task_claim("jobs", "seed")
    assert task is not None
    await queue.task_complete(task.id, "seed", claim=task.claim)
    await sql(queue, "UPDATE tasks SET finished_at = %s WHERE id = %s", at, task.id)


async def test_yesterday_and_the_schedule_follow_the_config_time_zone(
        queue: TaskQueue, tmp_path: Path) -> None:
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace('timezone = "UTC"', 'timezone = "America/New_York"'))
    config = load_config(path, imports=False)
    day = date(2026, 12, 1)
    # 23:30 in New York on the 30th is already the 1st in UTC: still yesterday there.
    await _done_at(queue, "late in New York", datetime.combine(day - timedelta(days=1),
                                                               time(23, 30), NEW_YORK))
    await _done_at(queue, "just after midnight", datetime.combine(day, time(0, 5), NEW_YORK))

    briefing, rendered = await compose(queue, day, config=config)

    assert briefing.totals()["succeeded"] == 1 and briefing.covers == date(2026, 11, 30)
    assert "late in New York" in rendered.text and "just after midnight" not in rendered.text
    runs = {u.producer: u.at for u in briefing.upcoming}
    assert [(at.tzinfo, at.hour, at.minute) for at in (runs["scrape"], runs["daily"])] == [
        (NEW_YORK, 3, 15), (NEW_YORK, 7, 30)]
    assert datetime.now(UTC) < min(runs.values()) <= datetime.now(UTC) + timedelta(days=1)
    assert [u.at for u in briefing.upcoming] == sorted(runs.values())
    assert today(config, datetime(2026, 12, 1, 3, 0, tzinfo=UTC)) == date(2026, 11, 30)
