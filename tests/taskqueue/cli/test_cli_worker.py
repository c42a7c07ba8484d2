"""`signoff worker`: registered on the CLI; handler, lease and timeout from flags or config."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from taskqueue import (
    ConfigError,
    ObservabilityServer,
    Reaper,
    TaskQueue,
    bind_listen,
    load_config,
)
from taskqueue.cli.main import build_parser, main
from taskqueue.cli.worker import _capability_run, _worker_config
from tests.stopping import stopped_while_starting, waits_for_a_lock
from tests.taskqueue import handlers_for_tests as h
from tests.taskqueue.cli_helpers import Cli, check_failed, count
from tests.taskqueue.worker_helpers import events, spawn_worker, wait_status
from tests.timing import limit

H = "tests.taskqueue.handlers_for_tests"


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["worker", *argv])


def test_worker_is_a_signoff_command() -> None:
    args = parse("--capability", "a", "--capability", "b", "--concurrency", "3")
    assert args.capability == ["a", "b"] and args.concurrency == 3


def test_a_worker_without_a_handler_is_one_line_and_exit_1(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, dsn: str) -> None:
    monkeypatch.setenv("DATABASE_URL", dsn)
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    assert main(["worker", "--capability", "mail"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("signoff: no handler for capability 'mail'") and err.count("\n") == 1


async def test_handler_lease_and_timeout_come_from_the_config(tmp_path: Path,
                                                              queue: TaskQueue) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[capabilities.mail]\nhandler = '{H}:quick'\nconcurrency = 4\n"
                    "lease_seconds = 40\ntimeout_seconds = 9\n")
    config = load_config(path, env={})
    args = parse("--capability", "mail", "--config", str(path))
    run = await _capability_run(queue, config, args, "mail")
    assert (run.handler, run.lease, run.timeout) == (h.quick, 40, 9)
    assert _worker_config(config, args, [run]).concurrency == 4


async def test_flags_win_and_the_lease_defaults_to_the_database(queue: TaskQueue) -> None:
    await queue.capability_set("mail", lease_seconds=77)
    config = load_config(None, env={})
    args = parse("--capability", "mail", "--handler", f"{H}:stubborn", "--timeout", "2")
    run = await _capability_run(queue, config, args, "mail")
    assert (run.handler, run.lease, run.timeout) == (h.stubborn, 77, 2)
    with pytest.raises(ConfigError, match="cannot import"):
        await _capability_run(queue, config, parse("--capability", "x", "--handler", "no:pe"),
                              "x")


async def test_the_worker_applies_the_caps_of_its_capabilities_from_the_config(
        tmp_path: Path, dsn: str, queue: TaskQueue) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[capabilities.mail]\nhandler = '{H}:quick'\nmax_running = 1\n"
                    f"max_parked = 3\ndaily_new = 9\n"
                    f"[capabilities.other]\nhandler = '{H}:quick'\nmax_running = 7\n")
    env = os.environ | {"DATABASE_URL": dsn}
    with (tmp_path / "w.log").open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "taskqueue", "worker", "--capability",
                                 "mail", "--config", str(path)], env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + limit(30)
        while (await queue.capability_get("mail")).max_running != 1:
            assert time.monotonic() < deadline and proc.poll() is None, "caps not applied"
            await asyncio.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=limit(30)) == 0
    mail = await queue.capability_get("mail")
    assert (mail.max_running, mail.max_parked, mail.daily_new) == (1, 3, 9)
    assert (await queue.capability_get("other")).max_running is None  # not this worker's


# A handler module whose import waits for the test: the worker is then starting, in a window
# the test holds open for as long as it likes.
SLOW_IMPORT = """
import os, pathlib, time

pathlib.Path(os.environ["SLOW_IMPORT_STARTED"]).touch()
deadline = time.monotonic() + 120
while not pathlib.Path(os.environ["SLOW_IMPORT_GO"]).exists() and time.monotonic() < deadline:
    time.sleep(0.05)


async def handler(task, ctx):
    from taskqueue import Done
    return Done()
"""


async def _never_claimed(queue: TaskQueue, task_id: int) -> bool:
    task = await queue.task_get(task_id)
    return task.status == "pending" and not await events(queue, task_id, "claimed")


async def test_a_stop_while_the_handlers_are_imported_is_a_clean_exit_without_a_claim(
        tmp_path: Path, dsn: str, queue: TaskQueue) -> None:
    (tmp_path / "slow_start.py").write_text(SLOW_IMPORT)
    started, go = tmp_path / "started", tmp_path / "go"
    task = await queue.task_enqueue("mail", {})
    env = os.environ | {"DATABASE_URL": dsn, "SLOW_IMPORT_STARTED": str(started),
                        "SLOW_IMPORT_GO": str(go)}
    env.pop("SIGNOFF_CONFIG", None)

    async def importing() -> bool:
        return started.exists()

    async def release() -> None:
        go.touch()

    log = tmp_path / "w.log"
    code = await stopped_while_starting(
        ["worker", "--capability", "mail", "--handler", "slow_start:handler",
         "--app-dir", str(tmp_path)], env, log, importing, release)
    # Before the worker heard signals from its start, this one killed it: exit -15.
    assert code == 0, log.read_text()
    assert "worker stopped" in log.read_text()
    assert await _never_claimed(queue, task.id)


async def test_a_stop_while_the_caps_are_written_is_a_clean_exit_without_a_claim(
        tmp_path: Path, dsn: str, queue: TaskQueue) -> None:
    await queue.capability_set("mail", max_running=5)
    task = await queue.task_enqueue("mail", {})
    path = tmp_path / "c.toml"
    path.write_text(f"[capabilities.mail]\nhandler = '{H}:quick'\nmax_running = 1\n")
    log = tmp_path / "w.log"
    # The capability's row locked by the test: the worker's write of its caps waits for it.
    async with (await psycopg.AsyncConnection.connect(dsn) as holder,
                await psycopg.AsyncConnection.connect(dsn, autocommit=True) as probe):
        await holder.execute("SELECT 1 FROM capabilities WHERE capability = 'mail' FOR UPDATE")

        code = await stopped_while_starting(
            ["worker", "--capability", "mail", "--config", str(path)],
            os.environ | {"DATABASE_URL": dsn}, log, lambda: waits_for_a_lock(probe),
            holder.rollback)
    # Before the worker heard signals from its start, this one killed it: exit -15.
    assert code == 0, log.read_text()
    assert (await queue.capability_get("mail")).max_running == 1  # it finished starting
    assert await _never_claimed(queue, task.id)


@pytest.mark.slow
async def test_a_worker_serves_health_and_metrics_on_its_own_port(
        dsn: str, queue: TaskQueue, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    enq = await queue.task_enqueue("demo", {})
    proc = spawn_worker(dsn, "demo", "quick", "--metrics-listen", f"127.0.0.1:{port}",
                        log=tmp_path / "worker.log")
    try:
        await wait_status(queue, enq.id, "succeeded", timeout=20)
        status, _, body = await get(f"{base}/healthz")
        _, _, text = await get(f"{base}/metrics")
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0 and status == 200 and '"worker": "ok"' in body
    counts = {s.labels.get("outcome"): s.value for f in text_string_to_metric_families(text)
              for s in f.samples if s.name == "signoff_handler_duration_seconds_count"}
    assert counts == {"done": 1}


def test_a_busy_metrics_port_stops_the_worker_before_the_caps_are_written(
        tmp_path: Path, dsn: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[capabilities.mail]\nhandler = '{H}:quick'\nmax_running = 1\n")
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        done = Cli(dsn)("worker", "--capability", "mail", "--config", str(path),
                        "--metrics-listen", f"127.0.0.1:{port}")
    assert check_failed(done, 1) == (f"signoff: cannot serve /healthz and /metrics on "
                                     f"127.0.0.1:{port} (Address already in use)")
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0
    # On a free port the caps are written and the port served (the two tests above).
    done = Cli(dsn)("worker", "--capability", "mail", "--config", str(path),
                    "--handler", "no:pe", "--metrics-listen", f"127.0.0.1:{port}")
    assert "cannot import" in check_failed(done, 1)  # a handler is checked first too
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0


async def test_a_bound_address_is_served_once_started_and_released_when_never_served(
        queue: TaskQueue) -> None:
    sockets = bind_listen("127.0.0.1:0")
    port = sockets[0].getsockname()[1]
    with pytest.raises(ConfigError, match=f"on 127.0.0.1:{port} .Address already in use"):
        bind_listen(f"127.0.0.1:{port}")
    server = ObservabilityServer(queue, f"127.0.0.1:{port}", sockets=sockets)
    await server.start()
    try:
        assert server.port == port
        status, _, body = await get(f"http://127.0.0.1:{port}/healthz")
        assert status == 200 and '"database": "ok"' in body
    finally:
        await server.stop()
    unserved = bind_listen(f"127.0.0.1:{port}")  # stop released it
    await ObservabilityServer(queue, f"127.0.0.1:{port}", sockets=unserved).stop()
    assert all(sock.fileno() == -1 for sock in unserved)


async def test_a_bad_metrics_address_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse("--capability", "demo", "--metrics-listen", "nowhere")
    assert exit_.value.code == 2 and "must be HOST:PORT" in capsys.readouterr().err


async def get(url: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, response.headers["Content-Type"], await response.text()


@pytest.mark.slow
async def test_a_bare_worker_warns_once_at_start_when_no_reaper_ran(
        tmp_path: Path, dsn: str, queue: TaskQueue) -> None:
    said = "no reaper: the reaper has never run on this database"
    for reaped in (False, True):
        if reaped:
            await Reaper(queue).run_once()  # a reaper ran just now: nothing to say
        task_id = (await queue.task_enqueue("mail", {})).id
        log = tmp_path / f"w{int(reaped)}.log"
        proc = spawn_worker(dsn, "mail", "quick", log=log)
        try:
            await wait_status(queue, task_id, "succeeded")
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        assert log.read_text().count(said) == (0 if reaped else 1), log.read_text()
        assert "no reaper:" not in log.read_text() or not reaped
