"""The service: each part starts with one log line, work flows, the Telegram hook, SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.service import Service, TelegramFactory
from taskqueue import Status, TaskQueue, load_config
from tests.taskqueue.cli_helpers import count
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


class FailingTelegram(StubTelegram):
    """A part whose stop raises, as a channel's stop can when its server went away."""

    async def stop(self) -> None:
        await super().stop()
        raise RuntimeError("the channel's client broke while stopping")


async def _running(service: Service, stubs: list[StubTelegram]) -> asyncio.Task[int]:
    """`service.run()` in a task, once its Telegram stand-in has started."""
    run = asyncio.create_task(service.run())
    await wait_for(lambda: asyncio.sleep(0, bool(stubs) and stubs[0].calls == ["start"]),
                   timeout=20)
    return run


def _stand_in(kind: type[StubTelegram], stubs: list[StubTelegram]) -> TelegramFactory:
    def factory(service: Service) -> StubTelegram:
        stubs.append(kind(service))
        return stubs[0]
    return factory


async def test_a_part_that_fails_to_stop_is_named_the_others_stop_and_run_exits_1(
        dsn: str, config_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    stubs: list[StubTelegram] = []
    service = Service(load_config(config_file, env={}), dsn=dsn,
                      telegram=_stand_in(FailingTelegram, stubs))
    run = await _running(service, stubs)
    pool_runs = list(service._pool_runs)
    service.request_stop()
    assert await asyncio.wait_for(run, 30) == 1
    assert stubs[0].calls == ["start", "stop"]
    assert service.stop_failures == ["telegram"]
    # The parts after the failed one stopped all the same.
    assert service.http is None and service.queue is None
    assert pool_runs and all(task.done() for task in pool_runs)
    messages = [r.getMessage() for r in caplog.records if r.name == "signoff.service"]
    assert "service: stopping the telegram failed" in messages
    assert "service stopped; these parts failed to stop: telegram" in messages
    assert "service stopped" not in messages


async def test_a_clean_stop_still_returns_0(dsn: str, config_file: Path) -> None:
    stubs: list[StubTelegram] = []
    service = Service(load_config(config_file, env={}), dsn=dsn,
                      telegram=_stand_in(StubTelegram, stubs))
    run = await _running(service, stubs)
    service.request_stop()
    assert await asyncio.wait_for(run, 30) == 0
    assert service.stop_failures == [] and service.queue is None


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


def _run_bot(config: Path, dsn: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("TELEGRAM_", "SIGNOFF_"))}
    return subprocess.run([sys.executable, "-m", "bot", "--config", str(config)], cwd=ROOT,
                          env=clean | {"DATABASE_URL": dsn} | env, capture_output=True,
                          text=True, timeout=60, check=False)


def _tables(dsn: str) -> int:
    return count(dsn, "SELECT count(*) FROM information_schema.tables "
                      "WHERE table_schema = 'public'")


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 someone else listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def test_a_busy_http_port_stops_the_service_before_anything_is_written(
        dsn: str, empty_dsn: str, tmp_path: Path, busy_port: int) -> None:
    config = tmp_path / "busy.toml"
    config.write_text(f'[http]\nlisten = "127.0.0.1:{busy_port}"\n\n' + CONFIG)
    for db in (dsn, empty_dsn):
        done = _run_bot(config, db)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr == (f"signoff: cannot serve /healthz and /metrics on "
                               f"127.0.0.1:{busy_port} (Address already in use)\n")
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0
    assert _tables(empty_dsn) == 0  # not even migrated


@pytest.mark.parametrize(("env", "said"), [
    ({"TELEGRAM_BOT_TOKEN": "123:abc"}, "TELEGRAM_CHAT_ID is missing"),
    ({"TELEGRAM_BOT_TOKEN": "123:abc", "TELEGRAM_CHAT_ID": "-1", "TELEGRAM_ALLOWED_USER_IDS": "x"},
     "TELEGRAM_ALLOWED_USER_IDS must be positive numbers"),
    ({"TELEGRAM_BOT_TOKEN": "123:abc", "TELEGRAM_CHAT_ID": "-1", "TELEGRAM_ALLOWED_USER_IDS": "7",
      "TELEGRAM_WEBHOOK_URL": "https://bot.example.com/tg", "TELEGRAM_WEBHOOK_PORT": "{port}"},
     "cannot listen for the Telegram webhook on 127.0.0.1:{port}"),
])
def test_a_bad_telegram_setting_stops_the_service_before_anything_is_written(
        dsn: str, empty_dsn: str, config_file: Path, busy_port: int, env: dict[str, str],
        said: str) -> None:
    env = {k: v.format(port=busy_port) for k, v in env.items()}
    for db in (dsn, empty_dsn):
        done = _run_bot(config_file, db, **env)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and said.format(port=busy_port) in lines[0], done.stderr
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0
    assert _tables(empty_dsn) == 0


def test_a_workloads_failing_settings_check_stops_the_service_before_anything_is_written(
        dsn: str, empty_dsn: str, tmp_path: Path) -> None:
    config = tmp_path / "briefing.toml"
    config.write_text(CONFIG + """
[capabilities.briefing]
handler = "workloads.briefing.handler:handle"
max_running = 1

[[capabilities.briefing.producers]]
name = "daily"
function = "workloads.briefing.producer:daily"
cron = "30 7 * * *"

[workloads.briefing]
max_items = 99
""")
    for db in (dsn, empty_dsn):
        done = _run_bot(config, db)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "workloads.briefing.max_items" in lines[0], done.stderr
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0
    assert _tables(empty_dsn) == 0


async def test_the_service_serves_on_the_address_it_bound_and_writes_the_caps(
        dsn: str, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "http.toml"
    config.write_text(f'[http]\nlisten = "127.0.0.1:{port}"\n\n' + CONFIG)
    service = Service(load_config(config, env={}), dsn=dsn, telegram=None)
    await service.start()
    try:
        assert service.http is not None and service.http.port == port
        async with aiohttp.ClientSession() as session, \
                session.get(f"http://127.0.0.1:{port}/healthz") as response:
            body = await response.json()
        assert body["checks"]["database"] == "ok" and body["checks"]["scheduler"] == "ok"
    finally:
        await service.stop()
    assert count(dsn, "SELECT max_running FROM capabilities WHERE capability = 'mail'") == 2
    with socket.socket() as again:  # stop released the address
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()
