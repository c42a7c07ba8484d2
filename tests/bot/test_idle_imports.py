"""An idle service holds none of its workloads' and channels' big libraries (issue 26, goal 8):
`python -m bot` with the example config (every workload configured, Telegram on the fake Bot
API, the web inbox on) has checked every workload's config at start, yet has not imported
Playwright, pyVmomi, libvirt, Jinja2, pypdf or pypdfium2. Each workload loads them when it
first runs; the workloads' own tests run those first slices (tests/workloads)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.service_rss import example_copy
from tests.bot.conftest import ALICE, CHAT
from tests.bot.fake_telegram import FakeTelegram
from tests.timing import WAIT

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# Top-level packages. Pygments is left out: in a venv with the dev tools, httpx (under
# python-telegram-bot) imports it for its own command line whenever click is installed.
HEAVY = ("playwright", "greenlet", "pyVmomi", "pyVim", "libvirt", "jinja2", "pypdf",
         "pypdfium2")

# `python -m bot`'s own main(), its Service.start wrapped to report the loaded packages
# once the service has started and idled a moment, then to stop it as SIGTERM would.
CHILD = """\
import asyncio, json, sys
from bot import service
from bot.__main__ import main

started = service.Service.start

async def start_and_report(self):
    await started(self)
    await asyncio.sleep(1.0)
    loaded = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
    print("LOADED " + json.dumps(loaded), flush=True)
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
    assert fake.calls_to("getMe")  # Telegram really ran, against the fake
