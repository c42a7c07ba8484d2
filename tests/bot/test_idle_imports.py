"""An idle service holds none of its workloads' and channels' big libraries (issue 26, goal 8):
`python -m bot` with the example config (every workload configured, Telegram on the fake Bot
API, the web inbox on) has checked every workload's config at start, yet has not imported
Playwright, pyVmomi, libvirt, Jinja2, pypdf, pypdfium2, Pygments or rich. Each workload loads
them when it first runs; the workloads' own tests run those first slices (tests/workloads).

The service runs the example's copy with its producers' crons and digest time moved twelve
hours away: started within an hour after 07:30, the example's own schedule runs the missed
briefing at start (a producer's catch-up), which renders with Jinja2, and that service is
busy, not idle (CI failed this way once, between 07:30 and 08:30 UTC)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.service_rss import EXAMPLE, example_copy
from bot.scheduler import previous_fire_time
from taskqueue import cron_trigger, load_config
from tests.bot.conftest import ALICE, CHAT
from tests.bot.fake_telegram import FakeTelegram
from tests.timing import WAIT

ROOT = Path(__file__).resolve().parents[2]
# Top-level packages. Pygments and rich too: httpx (under python-telegram-bot) would import
# them for its own command line whenever click is installed, which bot/__init__.py stops;
# Tornado, which tenacity and python-telegram-bot import when it is there, and cryptography,
# which python-telegram-bot imports for Telegram Passport (bot/__main__.py).
HEAVY = ("playwright", "greenlet", "pyVmomi", "pyVim", "libvirt", "jinja2", "pypdf",
         "pypdfium2", "pygments", "rich", "tornado", "cryptography")

# `python -m bot`'s own main(), its Service.start wrapped to report the loaded packages
# once the service has started and idled a moment, then to stop it as SIGTERM would.
CHILD = """\
import asyncio, json, sys
from bot.__main__ import main  # first, as `python -m bot` runs it
from bot import service

started = service.Service.start

async def start_and_report(self):
    await started(self)
    await asyncio.sleep(1.0)
    # A name marked absent (None) is not loaded.
    loaded = sorted({name.split(".")[0] for name, module in sys.modules.items()
                     if module is not None} & set(HEAVY))
    print("LOADED " + json.dumps(loaded), flush=True)
    # Absent only while python-telegram-bot imported: the web's passkeys still find it.
    from webauthn.helpers import parse_registration_credential_json
    from cryptography.hazmat.primitives import hashes
    print("CRYPTOGRAPHY " + hashes.SHA256.name, flush=True)
    self.request_stop()

service.Service.start = start_and_report
sys.exit(main(["--config", CONFIG]))
"""


def _service_env(fake: FakeTelegram, dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TELEGRAM_") and k != "SIGNOFF_CONFIG"}
    return env | {"DATABASE_URL": dsn, "TELEGRAM_BOT_TOKEN": fake.token,
                  "TELEGRAM_API_BASE_URL": fake.url, "TELEGRAM_CHAT_ID": str(CHAT),
                  "TELEGRAM_ALLOWED_USER_IDS": str(ALICE["id"])}


def _due_at_start(config: Path, now: datetime) -> list[str]:
    """What the service started at `now` would run within its first hour: a producer's
    catch-up (its last fire time within the misfire grace) or next fire, or a digest (the
    scheduler's daily trigger at HH:MM, which does not catch up)."""
    c = load_config(config, imports=False)
    grace, hour = timedelta(seconds=c.misfire_grace_seconds), timedelta(hours=1)
    schedules = [(f"{cap.name}:{p.name}", p.cron, True)
                 for cap in c.capabilities.values() for p in cap.producers]
    for at in c.digest_times:
        hh, mm = at.split(":")
        schedules.append((f"digest {at}", f"{mm} {hh} * * *", False))
    due = []
    for name, cron, catches_up in schedules:
        trigger = cron_trigger(cron, c.timezone)
        upcoming = trigger.get_next_fire_time(None, now)
        if (catches_up and previous_fire_time(trigger, now, grace)) or (
                upcoming and upcoming - now < hour):
            due.append(name)
    return due


def test_the_idle_copy_has_nothing_due_at_any_time_of_day(tmp_path: Path) -> None:
    start = datetime(2026, 12, 6, tzinfo=UTC)
    for quarter in range(24 * 4):
        now = start + timedelta(minutes=15 * quarter)
        assert _due_at_start(example_copy(tmp_path, now=now), now) == [], now
    # The example itself is not idle at 07:31: its 07:30 briefing catches up at start.
    assert "briefing:daily" in _due_at_start(EXAMPLE, start.replace(hour=7, minute=31))


@pytest.mark.slow
async def test_the_example_service_idles_without_its_workloads_libraries(
        dsn: str, fake: FakeTelegram, tmp_path: Path) -> None:
    config = example_copy(tmp_path)
    code = f"HEAVY = {HEAVY!r}\nCONFIG = {str(config)!r}\n{CHILD}"
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", code], cwd=ROOT, env=_service_env(fake, dsn),
        capture_output=True, text=True, timeout=WAIT * 2)

    assert done.returncode == 0, done.stderr[-3000:]
    assert "service started" in done.stderr and "telegram: started" in done.stderr
    assert "web: inbox served" in done.stderr
    report = [line for line in done.stdout.splitlines() if line.startswith("LOADED ")]
    assert report, done.stderr[-3000:]
    assert json.loads(report[0].removeprefix("LOADED ")) == []
    assert "CRYPTOGRAPHY sha256" in done.stdout
    assert fake.calls_to("getMe")  # Telegram really ran, against the fake
