"""`python -m bot` with no `[http]` serves the web inbox on 127.0.0.1 (DEFAULT_LISTEN, or a
free port when that one is taken, said in one line), so two such services on one host both
run; it ends its start with three lines on what to do next, and the first-task line works as
written. `[http] listen = "off"` serves nothing. (A busy explicit port still stops the start:
tests/bot/test_service.py, test_a_busy_http_port_stops_the_service_before_anything_is_written.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.observe import DEFAULT_LISTEN
from bot.service import Service
from taskqueue import TaskQueue, load_config
from tests.bot.test_service import CONFIG
from tests.taskqueue.cli_helpers import count
from tests.timing import WAIT

ROOT = Path(__file__).resolve().parents[2]
SIGNOFF = Path(sys.executable).parent / "signoff"
_TAKEN = re.compile(r"http: 127\.0\.0\.1:8080 is taken \(([^)]*)\); serving on "
                    r"127\.0\.0\.1:(\d+) instead")
_SERVING = re.compile(r"http: serving /healthz and /metrics on 127\.0\.0\.1:(\d+)")
_LINK = re.compile(r"inbox: (http://127\.0\.0\.1:\d+)/welcome\?token=([A-Za-z0-9_-]+) ")
_FIRST = re.compile(r"first task: (.+) \(in a shell with the same DATABASE_URL\)$", re.M)


@contextlib.contextmanager
def default_port_held() -> Iterator[None]:
    """Someone listens on the default port for the test (this test, or whoever had it)."""
    host, port = DEFAULT_LISTEN.split(":")
    holder = socket.socket()
    # As the services bind (aiohttp's reuse_address): a closed connection of an earlier
    # service on the port (TIME_WAIT, a minute) must not look like a listener to this one.
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        holder.bind((host, int(port)))
        holder.listen()
    except OSError:
        pass  # taken already: by another service on this machine
    try:
        yield
    finally:
        holder.close()


def _start(folder: Path, dsn: str, name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SIGNOFF_"))}
    env |= {"DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1"}
    log = folder / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=folder, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    return proc, log


async def _started(proc: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + WAIT
    while "telegram setup:" not in (text := log.read_text(errors="replace")):
        assert proc.poll() is None, f"the service exited {proc.returncode}:\n{text}"
        assert time.monotonic() < deadline, f"no start within {WAIT}s:\n{text}"
        await asyncio.sleep(0.2)
    return text


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code


async def _stop(*procs: subprocess.Popen[bytes]) -> list[int]:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    return [await asyncio.wait_for(asyncio.to_thread(p.wait), WAIT) for p in procs]


async def test_two_services_with_no_http_both_serve_the_inbox_and_say_what_to_do_next(
        dsn: str, tmp_path: Path) -> None:
    alone, starter = tmp_path / "alone", tmp_path / "starter"
    alone.mkdir()
    assert subprocess.run([str(SIGNOFF), "init", str(starter)], capture_output=True,
                          timeout=60, check=False).returncode == 0
    config = starter / "signoff.toml"
    config.write_text(re.sub(r"\[http\]\n[^\n]*\n\n", "", config.read_text()))
    assert "[http]" not in config.read_text()  # both services: no [http] at all
    with default_port_held():
        a, a_log = _start(alone, dsn, "alone")  # no config at all
        b, b_log = _start(starter, dsn, "starter", "--config", "signoff.toml")
        try:
            texts = [await _started(a, a_log), await _started(b, b_log)]
            ports = []
            for text in texts:
                taken = _TAKEN.search(text)
                assert taken is not None, text
                assert taken[1] == "Address already in use"
                serving = _SERVING.search(text)
                assert serving is not None and serving[1] == taken[2]
                ports.append(int(taken[2]))
                assert len(_TAKEN.findall(text)) == 1
            assert ports[0] != ports[1]
            for port in ports:  # both serve: /healthz, and the inbox's sign-in page
                assert await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/healthz") in (
                    200, 503)
                assert await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/login") == 200
            assert a.poll() is None and b.poll() is None
            await _the_three_lines(texts[0], texts[1], starter, dsn)
            await _the_link_is_not_logged_again(texts[0], ports[0])
        finally:
            codes = await _stop(a, b)
    assert codes == [0, 0]
    for log in (a_log, b_log):  # each printed its link once, and only once
        text = log.read_text()
        link = _LINK.search(text)
        assert link is not None and text.count(link[2]) == 1
    # The request log quoted the malformed request, its token masked.
    assert re.search(r"malformed request from 127\.0\.0\.1 refused \(400\): .*"
                     r"/welcome\?token=\[redacted\]", a_log.read_text())


async def _the_three_lines(alone: str, starter: str, folder: Path, dsn: str) -> None:
    for text in (alone, starter):
        tail = text[text.index("service started"):].splitlines()[1:4]
        assert [re.sub(r"^.* signoff\.service ", "", line).split(":")[0] for line in tail] == [
            "inbox", "first task", "telegram setup"]
        assert _LINK.search(tail[0])
        assert "TELEGRAM_BOT_TOKEN" in tail[2] and "docs/telegram.md" in tail[2]
    assert "no capability is configured" in alone and " init` writes a first workload" in alone
    first = _FIRST.search(starter)
    assert first is not None, starter
    assert "enqueue greet --config signoff.toml --payload" in first[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    done = subprocess.run(["bash", "-c", first[1]], cwd=folder, capture_output=True, text=True,
                          env=env | {"DATABASE_URL": dsn}, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    task = int(done.stdout.strip())
    async with TaskQueue.connect(dsn, max_size=1) as queue:  # the starter's pool runs it
        deadline = time.monotonic() + WAIT
        while (await queue.task_get(task)).status != "needs_approval":
            assert time.monotonic() < deadline, "the enqueued task was not run"
            await asyncio.sleep(0.2)


async def _the_link_is_not_logged_again(text: str, port: int) -> None:
    """The link opened, and sent in a request the server cannot parse (the request log
    quotes it): neither logs the token."""
    link = _LINK.search(text)
    assert link is not None and link[1] == f"http://127.0.0.1:{port}"
    assert await asyncio.to_thread(_get, f"{link[1]}/welcome?token={link[2]}") == 200
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /welcome?token={link[2]}\0 HTTP/1.1\r\n\r\n".encode())
    await writer.drain()
    assert b" 400 " in await reader.read(4096)
    writer.close()
    await writer.wait_closed()


async def test_listen_off_serves_nothing(dsn: str, tmp_path: Path,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + '\n[http]\nlisten = "off"\n')
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    with default_port_held():
        await service.start()
        try:
            assert service.http is None and service.web is None
        finally:
            await service.stop()
    said = [r.getMessage() for r in caplog.records if r.name == "signoff.service"]
    assert "http: off" in said
    assert any(line.startswith("inbox: off (no [http] listener") for line in said)
    assert count(dsn, "SELECT count(*) FROM web_first_links") == 0


async def test_no_http_table_serves_the_inbox_in_process_too(
        dsn: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG)
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await service.start()
    try:
        assert service.http is not None and service.web is not None
        url = f"http://127.0.0.1:{service.http.port}/login"
        assert await asyncio.to_thread(_get, url) == 200
    finally:
        await service.stop()
    assert count(dsn, "SELECT count(*) FROM web_first_links") == 1
