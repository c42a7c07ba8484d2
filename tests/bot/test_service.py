"""The service: each part starts with one log line, work flows, the Telegram hook, SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bot.service import Service
from taskqueue import Status, TaskQueue, load_config
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status

H = "tests.taskqueue.handlers_for_tests"
CONFIG = f"""\
[scheduler]
misfire_grace_seconds = 1

[worker]
poll_interval_seconds = 0.2
grace_seconds = 1

[capabilities.mail]
handler = "{H}:quick"
mode = "pool"
concurrency = 2
max_running = 2
lease_seconds = 30

[capabilities.cv]
handler = "{H}:quick"
mode = "tick"
tick_minutes = 60

[[capabilities.cv.producers]]
name = "nightly"
function = "{H}:nightly"
cron = "30 2 * * *"

[capabilities.build]
mode = "external"
"""


class StubTelegram:
    """Stands in for bot.telegram's part: records the hook's calls."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.calls: list[str] = []

    async def start(self) -> None:
        assert self.service.queue is not None and self.service.scheduler is not None
        self.service.scheduler.set_check("nudge_digest", self.digest)
        self.calls.append("start")

    async def digest(self) -> None:
        self.calls.append("digest")

    async def stop(self) -> None:
        assert self.service.queue is not None  # the database is still open
        self.calls.append("stop")


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG)
    return path


async def test_service_starts_each_part_runs_work_and_stops_cleanly(
        dsn: str, config_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    stubs: list[StubTelegram] = []

    def factory(service: Service) -> StubTelegram:
        stubs.append(StubTelegram(service))
        return stubs[0]

    service = Service(load_config(config_file, env={}), dsn=dsn, telegram=factory)
    await service.start()
    try:
        queue = service.queue
        assert queue is not None and service.scheduler is not None
        enq = await queue.task_enqueue("mail", {})
        await wait_status(queue, enq.id, "succeeded", timeout=5)
        assert (await queue.capability_get("mail")).max_running == 2
        assert set(service.scheduler.jobs) == {
            "reaper", "pruner", "incident_check", "tick:cv", "producer:cv:nightly",
            "nudge_digest:09:00", "nudge_digest:18:00"}
        await service.scheduler.run_job("nudge_digest:09:00")
    finally:
        await service.stop()
    assert stubs[0].calls == ["start", "digest", "stop"]
    assert service.queue is None
    messages = [r.getMessage() for r in caplog.records if r.name == "signoff.service"]
    for start in ("config: file=", "database: 127.0.0.1:5432", "migrations: up to date",
                  "scheduler: started jobs=", "worker pool: mailx2", "telegram: started",
                  "service started", "service stopped"):
        assert any(m.startswith(start) for m in messages), (start, messages)


async def test_a_tick_capability_runs_one_slice_per_tick(dsn: str, config_file: Path) -> None:
    service = Service(load_config(config_file, env={}), dsn=dsn, telegram=None)
    await service.start()
    try:
        assert service.queue is not None and service.scheduler is not None
        enq = await service.queue.task_enqueue("cv", {})
        report = await service.scheduler.run_job("tick:cv")
        assert report.task_id == enq.id
        assert (await service.queue.task_get(enq.id)).status is Status.SUCCEEDED
    finally:
        await service.stop()


def _spawn(args: list[str], dsn: str, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1"}
    for key in ("SIGNOFF_CONFIG", "TELEGRAM_BOT_TOKEN"):
        env.pop(key, None)
    with out.open("ab") as f:
        return subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=ROOT, env=env,
                                stdout=f, stderr=subprocess.STDOUT)


@pytest.mark.slow
async def test_python_m_bot_stops_cleanly_on_sigterm(dsn: str, config_file: Path,
                                                     tmp_path: Path,
                                                     queue: TaskQueue) -> None:
    out = tmp_path / "service.log"
    proc = _spawn(["--config", str(config_file)], dsn, out)
    try:
        await wait_for(lambda: _logged(out, "service started"), timeout=20)
        enq = await queue.task_enqueue("mail", {})
        await wait_status(queue, enq.id, "succeeded", timeout=5)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, out.read_text()
    assert "service stopped" in out.read_text()


async def test_a_bad_config_stops_the_service_before_anything_starts(
        dsn: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace('mode = "tick"', 'mode = "tock"'))
    out = tmp_path / "service.log"
    proc = _spawn(["--config", str(bad)], dsn, out)
    code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 15)
    text = out.read_text()
    assert code == 1
    assert f"{bad}, line 17: capabilities.cv.mode: must be one of" in text
    assert "database:" not in text and "Traceback" not in text


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()
