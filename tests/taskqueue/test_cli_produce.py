"""`signoff produce CAP [NAME] [--period P]`: a configured producer runs once, now, with the
scheduler's rule that a period runs to completion once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskqueue import ProducerJob, TaskQueue
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.cli_helpers import ERROR, OK, USAGE, Cli

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
    assert [r["name"] for r in json.loads(done.stdout)] == ["nightly", "hourly"]


@pytest.mark.parametrize(("args", "message"), [
    (["produce", "nope"], "no capability 'nope' in the config"),
    (["produce", "cv", "weekly"], "has no producer 'weekly' (it has: nightly, hourly)"),
    (["produce", "cv", "nightly", "--period", "2026-12"], "--period looks like 2026-12-01"),
    (["produce", "cv", "hourly", "--period", "2026-12-01"], "looks like 2026-12-01T02"),
])
async def test_bad_produce_input_is_one_line_and_writes_nothing(
        dsn: str, queue: TaskQueue, config: Path, args: list[str], message: str) -> None:
    done = Cli(dsn)(*args, "--config", str(config))
    assert done.returncode == ERROR and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert await queue.task_list(capability="cv") == []


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
