"""A burst of garbage at the service's two listening ports (/healthz and /metrics, and the
Telegram webhook listener) leaves a bounded number of log lines and no traceback, and both
still answer afterwards (a real `python -m bot`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.bot.fake_telegram import FakeTelegram
from tests.taskqueue.cli_helpers import closed_port
from tests.taskqueue.http.test_requestlog import send_garbage
from tests.taskqueue.worker_helpers import ROOT, wait_for

pytestmark = pytest.mark.slow

BURST = 200
# Lines the burst may add: the endpoints' few a minute, plus room for the service's own
# periodic lines (none are due in this short run).
MAX_NEW_LINES = 12
WEBHOOK_GARBAGE = [b"POST /telegram HTTP/1.1\r\nContent-Length: 5\r\n\r\n{oops",
                   b"POST /telegram HTTP/1.1\r\nContent-Length: 2\r\n"
                   b"X-Telegram-Bot-Api-Secret-Token: wrong\r\n\r\n{}",
                   b"NONSENSE\r\n\r\n", b"GET /telegram HTTP/1.1\r\nHost: \x00\r\n\r\n"]


async def webhook_garbage(port: int, count: int) -> None:
    for i in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(WEBHOOK_GARBAGE[i % len(WEBHOOK_GARBAGE)])
        await writer.drain()
        # the server may wait for the rest of a request it finds short: close it ourselves
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader.read(4096), 2)
        writer.close()
        await writer.wait_closed()


async def test_garbage_at_both_ports_is_a_few_lines_at_most(dsn: str, tmp_path: Path) -> None:
    fake = FakeTelegram()
    await fake.start()
    http_port, hook_port = closed_port(), closed_port()
    config = tmp_path / "signoff.toml"
    config.write_text(f'[http]\nlisten = "127.0.0.1:{http_port}"\n\n[telegram]\n'
                      f'chat_id = -100123\nallowed_user_ids = [11]\napi_base_url = "{fake.url}"\n'
                      'digest = false\n')
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
           "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_WEBHOOK_URL": "https://bot.example/telegram",
           "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1", "TELEGRAM_WEBHOOK_PORT": str(hook_port)}
    env.pop("SIGNOFF_CONFIG", None)
    out = tmp_path / "service.log"
    try:
        with out.open("ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "bot", "--config", str(config)],
                                    cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            await wait_for(lambda: _has(out, "service started"), timeout=60)
            before = out.read_text("utf-8", "replace").count("\n")
            await send_garbage(http_port, BURST)
            await webhook_garbage(hook_port, BURST)
            async with aiohttp.ClientSession() as session, \
                    session.get(f"http://127.0.0.1:{http_port}/healthz") as response:
                assert response.status in (200, 503)
            assert fake.webhook is not None  # the listener was registered and served
        finally:
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 60)
    finally:
        await fake.stop()
    text = out.read_text("utf-8", "replace")
    lines = text.splitlines()
    burst = [line for line in lines[before:] if "service stopping" in line]
    new = lines[before:lines.index(burst[0])] if burst else lines[before:]
    assert code == 0, text[-3000:]
    assert "Traceback" not in text
    assert 1 <= len(new) <= MAX_NEW_LINES, new
    assert any("malformed request from 127.0.0.1 refused (400)" in line for line in new)


async def _has(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text("utf-8", "replace")
