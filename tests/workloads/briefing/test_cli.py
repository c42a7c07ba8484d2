"""`signoff briefing --preview` as a real command against a seeded database: printed, unsent."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

from taskqueue import TaskQueue
from taskqueue.cli.main import build_parser
from tests.taskqueue.worker_helpers import ROOT

from .seed import Seeded

SIGNOFF = str(Path(sys.executable).with_name("signoff"))


async def _signoff(dsn: str, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": dsn, "SIGNOFF_CONFIG": str(config)}
    return await asyncio.to_thread(subprocess.run, [SIGNOFF, *args], cwd=ROOT, env=env,
                                   capture_output=True, text=True, timeout=60)


async def test_preview_prints_todays_briefing_and_sends_nothing(
        queue: TaskQueue, dsn: str, config_file: Path, seeded: Seeded, today: date) -> None:
    done = await _signoff(dsn, config_file, "briefing", "--preview")

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"Briefing · {today:%a} {today.day}")
    assert f"#{seeded.ids['sent_a']} Backend Engineer at Nordwind" in out
    assert f"signoff approve {seeded.ids['waits_short']} --by you" in out
    assert "job_applications: 2 succeeded · 1 skipped" in out
    assert "\x1b" not in out and "\\x1b[31mred" in out  # the terminal sees escapes only
    assert await queue.notification_list(kind="message") == []
    assert await queue.task_list(capability="briefing") == []


async def test_preview_prints_the_html_of_another_day(
        queue: TaskQueue, dsn: str, config_file: Path, seeded: Seeded, today: date) -> None:
    done = await _signoff(dsn, config_file, "briefing", "--preview", "--html", "--day",
                          "2020-01-02")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("☀️ <b>Briefing · Thu 2 Jan 2020</b>")
    assert "Backend Engineer" not in done.stdout  # another day's outcomes
    assert await queue.notification_list(kind="message") == []


async def test_briefing_without_preview_is_one_line_error(
        dsn: str, config_file: Path) -> None:
    done = await _signoff(dsn, config_file, "briefing")
    assert done.returncode != 0 and "use --preview" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_briefing_command_comes_from_the_entry_point() -> None:
    args = build_parser().parse_args(["briefing", "--preview", "--day", "2026-12-01"])
    assert args.command == "briefing" and args.preview and args.day == date(2026, 12, 1)


async def test_preview_json_is_one_document_with_the_text_and_the_html(
        queue: TaskQueue, dsn: str, config_file: Path, seeded: Seeded, today: date) -> None:
    done = await _signoff(dsn, config_file, "briefing", "--preview", "--json")

    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["day"] == today.isoformat() and doc["items"] > 0
    assert doc["text"].startswith(f"Briefing · {today:%a} {today.day}")
    assert doc["html"].startswith("☀️ <b>Briefing") and doc["subject"]
    assert "\x1b" not in done.stdout  # json.dumps escapes control characters
