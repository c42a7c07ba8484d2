"""The newcomer path: handlers found in the current folder, a fresh database that migrates
itself (or says what to run), and the embedded server stopped from the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from taskqueue import TaskQueue
from tests.taskqueue.cli_helpers import ERROR, OK, Cli

HANDLER = '''
from taskqueue import Done

async def hello(task, ctx):
    return Done({"hello": task.payload["name"]})
'''


def _signoff(*args: str, cwd: Path, env: dict[str, str],
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskqueue", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _worker(*args: str, cwd: Path, env: dict[str, str], out: Path) -> subprocess.Popen[bytes]:
    with out.open("wb") as log:
        return subprocess.Popen([sys.executable, "-m", "taskqueue", "worker", *args],
                                cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)


async def _wait_done(queue: TaskQueue, task_id: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (await queue.task_get(task_id)).status != "succeeded":
        assert time.monotonic() < deadline, "the task did not finish"
        await asyncio.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=30)


async def test_a_handler_in_the_current_folder_or_app_dir_is_found(
        dsn: str, queue: TaskQueue, tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "mywork").mkdir(parents=True)
    (app / "mywork" / "__init__.py").write_text("")
    (app / "mywork" / "greet.py").write_text(HANDLER)
    env = os.environ | {"DATABASE_URL": dsn}
    env.pop("PYTHONPATH", None)
    first = await queue.task_enqueue("greet", {"name": "Ada"})
    worker = _worker("--capability", "greet", "--handler", "mywork.greet:hello",
                     "--poll-interval", "0.2", cwd=app, env=env, out=tmp_path / "w1.log")
    try:
        await _wait_done(queue, first.id)
    finally:
        assert _stop(worker) == 0
    second = await queue.task_enqueue("greet", {"name": "Grace"})
    elsewhere = _worker("--capability", "greet", "--handler", "mywork.greet:hello",
                        "--app-dir", str(app), "--poll-interval", "0.2", cwd=tmp_path,
                        env=env, out=tmp_path / "w2.log")
    try:
        await _wait_done(queue, second.id)
    finally:
        assert _stop(elsewhere) == 0
    assert (await queue.task_get(second.id)).result == {"hello": "Grace"}
    # Without the folder on the path, the handler is a one-line error, not a traceback.
    missing = _signoff("worker", "--capability", "greet", "--handler", "mywork.greet:hello",
                       cwd=tmp_path, env=env)
    assert missing.returncode == ERROR and missing.stderr.count("\n") == 1
    assert "cannot import mywork" in missing.stderr


def test_a_database_without_tables_says_to_run_migrate(empty_dsn: str) -> None:
    done = Cli(empty_dsn)("ls")
    assert done.returncode == ERROR and done.stderr.count("\n") == 1
    assert "has no Signoff tables yet: run `signoff migrate` first" in done.stderr
    assert Cli(empty_dsn)("migrate").returncode == OK
    assert Cli(empty_dsn)("ls").returncode == OK


def test_the_embedded_server_migrates_itself_and_stops_from_the_cli(
        tmp_path: Path, data_folder: Path) -> None:
    # Run from pytest's folder (0700: the server's user cannot enter it, which it need not).
    data = data_folder / "data"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["SIGNOFF_DATA_DIR"] = str(data)
    try:
        done = _signoff("enqueue", "greet", "--payload", '{"name": "Ada"}', cwd=tmp_path, env=env)
        assert done.returncode == OK, done.stderr
        assert done.stdout.strip() == "1"
        status = _signoff("embedded", "status", "--json", cwd=tmp_path, env=env)
        assert json.loads(status.stdout)["running"] is True
    finally:
        stopped = _signoff("embedded", "stop", cwd=tmp_path, env=env)
    assert stopped.returncode == OK and "stopped" in stopped.stdout
    again = _signoff("embedded", "stop", cwd=tmp_path, env=env)
    assert again.returncode == OK and "was not running" in again.stdout
    status = _signoff("embedded", "status", "--json", cwd=tmp_path, env=env)
    assert json.loads(status.stdout)["running"] is False
