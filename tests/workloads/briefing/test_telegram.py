"""Through the service: the briefing arrives once per day in the fake Telegram, however
often the day is produced; and the shipped example config starts with the briefing on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.service import Service
from taskqueue import Status, TaskQueue, load_config
from tests.bot.conftest import ALICE, CHAT
from tests.bot.fake_telegram import FakeTelegram
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status

from .flow import TAGS, TELEGRAM_TAGS, messages
from .seed import CAP, Seeded, write_config

pytestmark = pytest.mark.slow

SIGNOFF = str(Path(sys.executable).with_name("signoff"))


def _briefings(fake: FakeTelegram) -> list[dict[str, Any]]:
    return [c.params for c in fake.calls_to("sendMessage")
            if str(c.params.get("text", "")).startswith("☀️")]


async def _produce(dsn: str, config: Path) -> str:
    env = {**os.environ, "DATABASE_URL": dsn}
    done = await asyncio.to_thread(
        subprocess.run, [SIGNOFF, "produce", CAP, "daily", "--config", str(config)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_the_briefing_arrives_once_per_day_however_often_the_day_is_produced(
        queue: TaskQueue, dsn: str, seeded: Seeded, today: date, fake: FakeTelegram,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The schedule is half a day away, so starting the service catches nothing up.
    cron = f"30 {(datetime.now(UTC).hour + 12) % 24} * * *"
    telegram = (f'[telegram]\nchat_id = {CHAT}\nallowed_user_ids = [{ALICE["id"]}]\n'
                f'api_base_url = "{fake.url}"\n')
    config = write_config(tmp_path, cron=cron, extra=telegram)
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", fake.token)
    service = Service(load_config(config), dsn=dsn)
    await service.start()
    try:
        assert service.scheduler is not None
        first = await service.scheduler.run_job(f"producer:{CAP}:daily")
        second = await service.scheduler.run_job(f"producer:{CAP}:daily")
        assert (first.ran, first.created, second.ran) == (True, 1, False)
        [task] = await queue.task_list(capability=CAP)
        await wait_status(queue, task.id, Status.SUCCEEDED, timeout=15)
        await fake.wait_for(lambda: _briefings(fake), timeout=10)
        assert "already ran: nothing enqueued" in await _produce(dsn, config)
        assert "already ran: nothing enqueued" in await _produce(dsn, config)
        await asyncio.sleep(1.0)  # room for a second message, were one owed
    finally:
        await service.stop()

    [sent] = _briefings(fake)
    assert len(await queue.task_list(capability=CAP)) == 1 and len(await messages(queue)) == 1
    text = sent["text"]
    assert sent["chat_id"] == CHAT and sent["parse_mode"] == "HTML"
    assert text.startswith(f"☀️ <b>Briefing · {today:%a} {today.day}")
    assert f"#{seeded.ids['sent_a']} Backend Engineer at Nordwind" in text
    assert f"signoff approve {seeded.ids['waits_long']} --by you" in text
    assert "&lt;script&gt;" in text and "<script>" not in text and "\x1b" not in text
    assert set(TAGS.findall(text)) <= TELEGRAM_TAGS and len(text) <= 4096


async def test_the_example_config_starts_with_the_briefing_in_the_pool(
        dsn: str, tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1"}
    for key in ("SIGNOFF_CONFIG", "TELEGRAM_BOT_TOKEN"):
        env.pop(key, None)
    out = tmp_path / "service.log"
    with out.open("ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "--config",
                                 "signoff.example.toml"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        await wait_for(lambda: _logged(out, "service started"), timeout=30)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log_text = out.read_text()
    assert code == 0, log_text[-2000:]
    assert "briefing(pool)" in log_text and "briefingx1" in log_text


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()
