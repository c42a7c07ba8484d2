"""`signoff web` on its own: over TLS the cookies are Secure; it stops cleanly."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import psycopg
import pytest

from bot.web.serve import serve
from bot.web.store import AccountStore
from taskqueue import Config, TaskQueue
from tests.bot.web.conftest import PASSWORD_HASH
from tests.stopping import ROOT, stopped_while_starting, waits_for_a_lock
from tests.taskqueue.cli_helpers import closed_port, count
from tests.timing import limit


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[str, str]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


async def test_over_tls_the_cookies_are_secure_httponly_and_strict(
        dsn: str, certificate: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", dsn)
    port = closed_port()
    ready, stop = asyncio.Event(), asyncio.Event()
    serving = asyncio.create_task(serve(Config(), f"127.0.0.1:{port}", certfile=certificate[0],
                                        keyfile=certificate[1], ready=ready, stop=stop))
    try:
        await asyncio.wait_for(ready.wait(), 60)
        context = ssl.create_default_context(cafile=certificate[0])
        context.check_hostname = False
        async with aiohttp.ClientSession() as session, session.get(
                f"https://127.0.0.1:{port}/login", ssl=context) as answer:
            assert answer.status == 200
            cookie = answer.headers["Set-Cookie"]
        assert re.search(r"(?i)\bsecure\b", cookie) and re.search(r"(?i)httponly", cookie)
        assert "SameSite=Strict" in cookie
    finally:
        stop.set()
        assert await asyncio.wait_for(serving, 60) == 0


async def _serve_once(dsn: str, monkeypatch: pytest.MonkeyPatch,
                      caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """`signoff web` started and stopped; the records of the signoff.web logger."""
    monkeypatch.setenv("DATABASE_URL", dsn)
    caplog.set_level(logging.DEBUG)
    port = closed_port()
    ready, stop = asyncio.Event(), asyncio.Event()
    serving = asyncio.create_task(serve(Config(), f"127.0.0.1:{port}", ready=ready, stop=stop))
    await asyncio.wait_for(ready.wait(), 60)
    stop.set()
    assert await asyncio.wait_for(serving, 60) == 0
    return [r for r in caplog.records if r.name == "signoff.web"]


async def test_the_serving_line_is_info_and_with_no_account_a_one_time_link_follows(
        dsn: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    records = await _serve_once(dsn, monkeypatch, caplog)
    serving = [r for r in records if "signoff web: serving on http://127.0.0.1:" in r.getMessage()]
    assert [r.levelno for r in serving] == [logging.INFO]
    links = [r.getMessage() for r in records if "/welcome?token=" in r.getMessage()]
    assert len(links) == 1 and links[0].startswith("inbox: http://127.0.0.1:")
    assert not [r for r in records if r.levelno >= logging.WARNING]


async def test_with_an_account_no_link_is_made(
        dsn: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    async with TaskQueue.connect(dsn, max_size=1) as queue:
        await AccountStore(queue.pool).account_add("ada", PASSWORD_HASH)
    records = await _serve_once(dsn, monkeypatch, caplog)
    assert not [r for r in records if "token=" in r.getMessage()]
    assert count(dsn, "SELECT count(*) FROM web_first_links") == 0


async def test_a_stop_while_it_migrates_ends_the_start_before_it_listens(
        tmp_path: Path, dsn: str) -> None:
    from taskqueue.store.migrate import LOCK_KEY

    log = tmp_path / "web.log"
    # The migrations' lock held by the test: the command's start waits for it.
    async with (await psycopg.AsyncConnection.connect(dsn, autocommit=True) as holder,
                await psycopg.AsyncConnection.connect(dsn, autocommit=True) as probe):
        await holder.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))

        async def release() -> None:
            await holder.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))

        code = await stopped_while_starting(
            ["-v", "web", "--listen", "127.0.0.1:0"], os.environ | {"DATABASE_URL": dsn}, log,
            lambda: waits_for_a_lock(probe), release)
    # Before it heard signals from its start, this one killed it: exit -15.
    assert code == 0, log.read_text()
    assert "stopped while starting" in log.read_text()
    assert "serving on" not in log.read_text()


def _start_web(tmp_path: Path, dsn: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """`signoff web ARGS` as a new user runs it (no level chosen), its output in a file."""
    env = os.environ | {"DATABASE_URL": dsn}
    for name in ("SIGNOFF_LOG_LEVEL", "SIGNOFF_CONFIG"):
        env.pop(name, None)
    log = tmp_path / "web.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "taskqueue", "web", *args], cwd=ROOT,
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc, log


async def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return await asyncio.to_thread(proc.wait, limit(30))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_a_new_users_start_says_where_it_serves_and_the_first_accounts_link(
        tmp_path: Path, dsn: str) -> None:
    proc, log = _start_web(tmp_path, dsn, "--listen", "127.0.0.1:0")
    try:
        deadline = time.monotonic() + limit(30)
        while "/welcome?token=" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
        text = log.read_text()
        link = re.search(r"inbox: (http://127\.0\.0\.1:(\d+)/welcome\?token=[\w-]+)", text)
        # The port the system gave for :0, in the serving line and in the link.
        assert link is not None and link.group(2) != "0", text
        assert f" INFO signoff.web signoff web: serving on http://127.0.0.1:{link.group(2)}\n" \
            in text
        async with aiohttp.ClientSession() as session, session.get(link.group(1)) as page:
            assert page.status == 200 and "password" in (await page.text()).lower()
    finally:
        code = await _stop(proc)
    assert code == 0, log.read_text()


async def test_a_chosen_level_is_kept(tmp_path: Path, dsn: str) -> None:
    port = closed_port()
    proc, log = _start_web(tmp_path, dsn, "--listen", f"127.0.0.1:{port}",
                           "--log-level", "warning")
    try:
        deadline = time.monotonic() + limit(30)
        while not await _answers(f"http://127.0.0.1:{port}/healthz"):
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
    finally:
        code = await _stop(proc)
    assert code == 0 and "serving on" not in log.read_text(), log.read_text()


async def _answers(url: str) -> bool:
    try:
        async with aiohttp.ClientSession() as session, session.get(url) as answer:
            return answer.status < 500
    except aiohttp.ClientConnectionError:
        return False
