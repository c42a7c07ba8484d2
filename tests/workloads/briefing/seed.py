"""A seeded day for the briefing tests: tasks of several capabilities finished yesterday in
every outcome, open questions of different ages, a failure with hostile text, a reaper run."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from taskqueue import Decision, Reaper, TaskQueue
from tests.taskqueue.factories import sql

CAP = "briefing"
HANDLER = "workloads.briefing.handler:handle"
HOSTILE = "boom <script>alert(1)</script> \x1b[31mred\x1b[0m & more"


def config_text(*, cron: str = "30 7 * * *", extra: str = "", section: str = "") -> str:
    """A service config: the briefing in the pool with its producer, a second producer to
    show as scheduled, and a nudge that fires for one question older than a day."""
    return f"""\
timezone = "UTC"

[signals]
nudge_count = 0
nudge_age_hours = 24

[worker]
poll_interval_seconds = 0.2
grace_seconds = 2

[capabilities.{CAP}]
handler = "{HANDLER}"
mode = "pool"
max_running = 1

[[capabilities.{CAP}.producers]]
name = "daily"
function = "workloads.briefing.producer:daily"
cron = "{cron}"

[capabilities.nightly_demo]
mode = "external"

[[capabilities.nightly_demo.producers]]
name = "scrape"
function = "tests.taskqueue.handlers_for_tests:nightly"
cron = "15 3 * * *"
{extra}
[workloads.briefing]
max_items = 8
{section}"""


def write_config(folder: Path, **kwargs: Any) -> Path:
    path = folder / "signoff.toml"
    path.write_text(config_text(**kwargs), "utf-8")
    return path


@dataclass
class Seeded:
    """What the seed made, by role, to check a briefing against."""

    today: date
    ids: dict[str, int] = field(default_factory=dict)


def yesterday_at(today: date, hour: int) -> datetime:
    return datetime.combine(today - timedelta(days=1), time(hour), UTC)


async def _finished(queue: TaskQueue, capability: str, payload: dict[str, Any], status: str,
                    at: datetime, *, question: str = "Go ahead?", error: str = "") -> int:
    """A task driven through the API into `status`, its finish time moved to `at`."""
    await queue.task_enqueue(capability, payload)
    task = await queue.task_claim(capability, "seed")
    assert task is not None
    if status == "succeeded":
        await queue.task_complete(task.id, "seed", claim=task.claim)
    elif status == "failed":
        await queue.task_fail(task.id, "seed", error, claim=task.claim, retry=False)
    else:
        await queue.task_park(task.id, "seed", question, claim=task.claim)
        if status == "skipped":
            await queue.approval_decide_for_task(task.id, Decision.SKIPPED, "mara", "not now")
        else:  # expired: past its expiry, then the reaper's run
            await sql(queue, "UPDATE approvals SET expires_at = now() - interval '1 s' "
                             "WHERE task_id = %s", task.id)
            assert (await Reaper(queue).run_once()).expired == 1
    await sql(queue, "UPDATE tasks SET finished_at = %s WHERE id = %s", at, task.id)
    return task.id


async def _open(queue: TaskQueue, capability: str, payload: dict[str, Any], question: str,
                hours_ago: float) -> int:
    await queue.task_enqueue(capability, payload)
    task = await queue.task_claim(capability, "seed")
    assert task is not None
    await queue.task_park(task.id, "seed", question, claim=task.claim)
    await sql(queue, "UPDATE approvals SET created_at = now() - make_interval(secs => %s) "
                     "WHERE task_id = %s", hours_ago * 3600, task.id)
    return task.id


async def seed(queue: TaskQueue, today: date) -> Seeded:
    """The day before `today`: 3 job applications (2 sent, 1 skipped), an expired VM
    change, a failed VM change with hostile error text, a cancelled build; and around it
    tasks finished the day before and today, two open questions, and a reaper run."""
    s = Seeded(today)
    s.ids["sent_a"] = await _finished(queue, "job_applications",
                                      {"title": "Backend Engineer at Nordwind"}, "succeeded",
                                      yesterday_at(today, 9))
    s.ids["sent_b"] = await _finished(queue, "job_applications",
                                      {"title": "Data Engineer at Fjord"}, "succeeded",
                                      yesterday_at(today, 10))
    s.ids["skipped"] = await _finished(queue, "job_applications", {"posting": 17}, "skipped",
                                       yesterday_at(today, 11),
                                       question="Submit application to Lumen for SRE?")
    s.ids["expired"] = await _finished(queue, "vm_ops", {"vm": "k3s-2"}, "expired",
                                       yesterday_at(today, 12))
    s.ids["failed"] = await _finished(queue, "vm_ops", {"vm": "pihole"}, "failed",
                                      yesterday_at(today, 13), error=HOSTILE)
    cancelled = await queue.task_enqueue("ios_build", {"repo": "signoff-ios"})
    await queue.task_cancel(cancelled.id, actor="mara")
    await sql(queue, "UPDATE tasks SET finished_at = %s WHERE id = %s",
              yesterday_at(today, 14), cancelled.id)
    s.ids["cancelled"] = cancelled.id
    s.ids["older"] = await _finished(queue, "job_applications", {"title": "Old news"},
                                     "succeeded", yesterday_at(today, 0) - timedelta(hours=1))
    s.ids["today"] = await _finished(queue, "vm_ops", {"vm": "not-yet"}, "succeeded",
                                     datetime.combine(today, time(0, 30), UTC))
    s.ids["waits_long"] = await _open(queue, "job_applications",
                                      {"title": "SRE at Acme & Co <b>"},
                                      "Submit application to Acme?", 50)
    s.ids["waits_short"] = await _open(queue, "vm_ops", {}, "Resize k3s-1 to 4 CPUs?", 3)
    await Reaper(queue).run_once()
    return s
