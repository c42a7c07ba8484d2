"""`signoff produce CAP [NAME] [--period P]`: a configured producer runs once, now, with the
scheduler's rule that a period runs to completion once."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from taskqueue import ProducerJob, TaskQueue
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.cli_helpers import ERROR, OK, USAGE, Cli, check_failed, count

H = "tests.taskqueue.handlers_for_tests"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(f"""
[capabilities.cv]
handler = "{H}:quick"
[[capabilities.cv.producers]]
name = "nightly"
function = "{H}:nightly"
cron = "30 2 * * *"
[[capabilities.cv.producers]]
name = "hourly"
function = "{H}:nightly"
cron = "5 * * * *"
period = "hour"
[[capabilities.cv.producers]]
name = "weekly"
function = "{H}:nightly"
cron = "0 3 * * 1"
period = "week"
""")
    return path


async def test_produce_runs_a_period_once_and_says_so(dsn: str, queue: TaskQueue,
                                                      config: Path) -> None:
    cli = Cli(dsn)
    done = cli("produce", "cv", "nightly", "--period", "2026-12-01", "--config", str(config))
    assert done.returncode == OK, done.stderr
    assert done.stdout == "producer nightly (cv) period 2026-12-01: created 3, existing 0\n"
    again = cli("produce", "cv", "nightly", "--period", "2026-12-01", "--config", str(config),
                "--json")
    assert again.returncode == OK
    assert json.loads(again.stdout) == [{"name": "nightly", "capability": "cv",
                                         "period": "2026-12-01", "ran": False, "created": 0,
                                         "existing": 0}]
    assert len(await queue.task_list(capability="cv")) == 3
    run = await queue.producer_run_get("cv", "nightly", "2026-12-01")
    assert run is not None and run.finished_at is not None and run.created == 3


async def test_produce_without_a_name_runs_every_producer_of_the_capability(
        dsn: str, queue: TaskQueue, config: Path) -> None:
    done = Cli(dsn)("produce", "cv", "--config", str(config), "--json")
    assert done.returncode == OK, done.stderr
    assert [r["name"] for r in json.loads(done.stdout)] == ["nightly", "hourly", "weekly"]


@pytest.mark.parametrize(("args", "message"), [
    (["produce", "nope"], "no capability 'nope' in the config"),
    (["produce", "cv", "monthly"], "has no producer 'monthly' (it has: nightly, hourly, weekly)"),
    (["produce", "cv", "nightly", "--period", "2026-12"], "--period looks like 2026-12-01"),
    (["produce", "cv", "hourly", "--period", "2026-12-01"], "looks like 2026-12-01T02"),
])
async def test_bad_produce_input_is_one_line_and_writes_nothing(
        dsn: str, queue: TaskQueue, config: Path, args: list[str], message: str) -> None:
    done = Cli(dsn)(*args, "--config", str(config))
    assert done.returncode == ERROR and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert await queue.task_list(capability="cv") == []


# (producer, --period): spellings that name no period of the producer's kind.
BAD_PERIODS = [
    ("nightly", "2026-13-45"), ("nightly", "2026-02-30"), ("nightly", "2026-00-10"),
    ("nightly", "0000-01-01"), ("nightly", "2026-12-01\n"), ("nightly", " 2026-12-01"),
    ("nightly", "2026-12-01 "), ("nightly", "\t2026-12-01"), ("nightly", "2026-12-01\x00"),
    ("nightly", "２０２６-12-01"), ("nightly", "2026-12-0١"), ("nightly", "٢٠٢٦-12-01"),
    ("nightly", "2026-1-01"), ("nightly", "+2026-12-01"), ("nightly", "2026/12/01"),
    ("nightly", "2026-12"), ("nightly", ""), ("nightly", "2026-12-01T02"),
    ("nightly", "2026-12-01" * 1000), ("nightly", "9" * 100_000),
    ("hourly", "2026-12-01T24"), ("hourly", "2026-12-01T2"), ("hourly", "2026-12-01T02:30"),
    ("hourly", "2026-12-01t02"), ("hourly", "2026-12-01T02\n"),
    ("weekly", "2026-W60"), ("weekly", "2026-W00"), ("weekly", "2025-W53"),
    ("weekly", "2026-W49-1"), ("weekly", "2026-w49"), ("weekly", "2026-W4９"),
    ("weekly", "2026-12-01"),
]


@pytest.mark.parametrize(("name", "period"), BAD_PERIODS)
def test_a_period_that_is_no_period_of_the_producers_kind_is_refused(
        dsn: str, config: Path, name: str, period: str) -> None:
    done = Cli(dsn).fast("produce", "cv", name, "--period", period, "--config", str(config))
    line = check_failed(done, ERROR)
    assert f"producer {name!r} runs per " in line and "--period looks like " in line
    assert len(line) < 300  # an overlong value is cut short, not echoed whole
    assert count(dsn, "SELECT count(*) FROM producer_runs") == 0
    assert count(dsn, "SELECT count(*) FROM tasks") == 0


def test_a_bad_period_through_the_real_command_names_the_value_and_the_form(
        dsn: str, config: Path) -> None:
    done = Cli(dsn)("produce", "cv", "weekly", "--period", "2026-W60", "--config", str(config))
    assert check_failed(done, ERROR) == ("signoff: producer 'weekly' runs per week: --period "
                                         "looks like 2026-W49 (YYYY-Www), not '2026-W60'")
    assert count(dsn, "SELECT count(*) FROM producer_runs") == 0


@pytest.mark.parametrize(("name", "first", "second", "stored"), [
    ("nightly", "2026-12-01", "20261201", "2026-12-01"),
    ("hourly", "2026-12-01T02", "2026-12-01T02:00", "2026-12-01T02"),
    ("hourly", "20261201T0200", "2026-12-01T02", "2026-12-01T02"),
    ("weekly", "2026W49", "2026-W49", "2026-W49"),
])
def test_one_period_under_two_spellings_runs_once(
        dsn: str, config: Path, name: str, first: str, second: str, stored: str) -> None:
    cli = Cli(dsn)
    ran = json.loads(cli.fast.ok("produce", "cv", name, "--period", first, "--config",
                                 str(config), "--json"))
    again = json.loads(cli.ok("produce", "cv", name, "--period", second, "--config",
                              str(config), "--json"))
    assert [(r["period"], r["ran"], r["created"]) for r in ran] == [(stored, True, 3)]
    assert [(r["period"], r["ran"], r["created"]) for r in again] == [(stored, False, 0)]
    assert count(dsn, "SELECT count(*) FROM producer_runs WHERE period = %s", stored) == 1
    assert count(dsn, "SELECT count(*) FROM producer_runs") == 1
    assert count(dsn, "SELECT count(*) FROM tasks") == 3


async def test_the_command_and_the_scheduler_store_a_period_under_one_key(
        dsn: str, queue: TaskQueue, config: Path) -> None:
    for name, period in (("nightly", "20261201"), ("weekly", "2026W49")):
        await asyncio.to_thread(Cli(dsn).fast.ok, "produce", "cv", name, "--period", period,
                                "--config", str(config))
    # The scheduler's firings of the same periods (2026-12-01 is a Tuesday of week 49).
    fired = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)
    day = await ProducerJob(queue, "nightly", "cv", h.nightly).run_once(fired)
    week = await ProducerJob(queue, "weekly", "cv", h.nightly, period="week").run_once(fired)
    assert (day.period, day.ran, week.period, week.ran) == ("2026-12-01", False,
                                                            "2026-W49", False)


def test_todays_period_runs_without_force(dsn: str, config: Path) -> None:
    today = datetime.now(UTC).date().isoformat()
    done = Cli(dsn)("produce", "cv", "nightly", "--period", today, "--config", str(config))
    assert done.returncode == OK and done.stderr == "", done.stderr
    assert done.stdout == f"producer nightly (cv) period {today}: created 3, existing 0\n"


@pytest.mark.parametrize(("name", "period"), [
    ("nightly", (date.today() + timedelta(days=2)).isoformat()),
    ("nightly", "2099-01-01"),
    ("hourly", "2099-01-01T00"),
    ("weekly", "2099-W01"),
])
def test_a_future_period_is_refused_without_force(dsn: str, config: Path, name: str,
                                                  period: str) -> None:
    done = Cli(dsn).fast("produce", "cv", name, "--period", period, "--config", str(config))
    line = check_failed(done, ERROR)
    assert f"--period {period} is in the future (UTC)" in line and "--force" in line
    assert count(dsn, "SELECT count(*) FROM producer_runs") == 0
    assert count(dsn, "SELECT count(*) FROM tasks") == 0


async def test_force_produces_a_future_period_and_says_its_scheduled_run_will_skip(
        dsn: str, queue: TaskQueue, config: Path) -> None:
    done = Cli(dsn)("produce", "cv", "nightly", "--period", "20990101", "--force", "--json",
                    "--config", str(config))
    assert done.returncode == OK, done.stderr
    assert json.loads(done.stdout) == [{"name": "nightly", "capability": "cv",
                                        "period": "2099-01-01", "ran": True, "created": 3,
                                        "existing": 0}]
    assert done.stderr == ("signoff: warning: producer nightly period 2099-01-01 is in the "
                           "future: its scheduled run will find it done and skip it\n")
    scheduled = await ProducerJob(queue, "nightly", "cv", h.nightly).run_once(
        datetime(2099, 1, 1, 2, 30, tzinfo=UTC))
    assert not scheduled.ran and scheduled.period == "2099-01-01"


def test_produce_needs_a_capability(dsn: str) -> None:
    done = Cli(dsn)("produce")
    assert done.returncode == USAGE and done.stderr.count("\n") == 1


async def test_stats_postings_lists_the_latest_report_item_by_item(
        dsn: str, queue: TaskQueue) -> None:
    job = ProducerJob(queue, "scrape", "cv", h.reporting)
    await job.run_once(period="2026-11-30")
    await job.run_once(period="2026-12-01")
    cli = Cli(dsn)
    text = cli("stats", "cv", "--postings")
    assert text.returncode == OK, text.stderr
    assert text.stdout.splitlines() == [
        "filtered                 Acme\\x1b[31m: Dev\\nOps  [too far]",
        "enqueued              7  Beta: SRE  task 1"]
    doc = json.loads(cli("stats", "cv", "--json", "--postings").stdout)
    assert doc["filtered_by_reason"] == {"too far": 2} and doc["reports"]["runs"] == 2
    assert [(p["key"], p["period"]) for p in doc["postings"]] == [
        ("a", "2026-12-01"), ("b", "2026-12-01")]
    both = json.loads(cli("stats", "cv", "--json", "--postings", "--runs", "2").stdout)
    assert len(both["postings"]) == 4
    none = cli("stats", "other", "--postings")
    assert none.returncode == OK and none.stdout.startswith("no per-item report")
