"""Garbage sent to /healthz's port: one line per malformed request at most, no traceback,
a bounded number of lines for a burst, and the server still answers afterwards."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest
from aiohttp import web

from taskqueue import ObservabilityServer, TaskQueue
from taskqueue.http.requestlog import LINES_PER_WINDOW

GARBAGE = [b"GARBAGE\r\n\r\n",
           b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
           b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
           b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n",
           b"POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]


async def send_garbage(port: int, count: int) -> None:
    """`count` malformed requests, each on its own raw connection."""
    for i in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(GARBAGE[i % len(GARBAGE)])
        await writer.drain()
        await reader.read(4096)  # the 400 answer, then the server closes
        writer.close()
        await writer.wait_closed()


def http_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.name.startswith(("aiohttp", "signoff.http")) and r.levelno >= logging.INFO]


async def test_a_burst_of_garbage_is_a_few_lines_without_tracebacks(
        queue: TaskQueue, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = ObservabilityServer(queue, "127.0.0.1:0")
    await server.start()
    try:
        caplog.clear()
        await send_garbage(server.port, 200)
        records = http_records(caplog)
        assert 1 <= len(records) <= LINES_PER_WINDOW, [r.getMessage() for r in records]
        assert all(r.exc_info is None and r.exc_text is None for r in records)
        assert all("\n" not in r.getMessage() for r in records)
        assert "malformed request from 127.0.0.1 refused (400)" in records[0].getMessage()
        async with aiohttp.ClientSession() as session, \
                session.get(f"http://127.0.0.1:{server.port}/healthz") as response:
            assert response.status == 200
    finally:
        await server.stop()


async def test_aiohttps_own_logger_prints_a_traceback_per_malformed_request(
        caplog: pytest.LogCaptureFixture) -> None:
    """The other direction: what the endpoints logged before (so the test above can fail)."""
    caplog.set_level(logging.DEBUG)
    runner = web.AppRunner(web.Application(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        await send_garbage(port, 10)
    finally:
        await runner.cleanup()
    tracebacks = [r for r in http_records(caplog) if r.exc_info]
    assert len(tracebacks) >= 5


async def test_a_token_in_a_malformed_request_is_masked_before_the_line_is_cut(
        queue: TaskQueue, caplog: pytest.LogCaptureFixture) -> None:
    # aiohttp quotes the request line in its complaint, sign-in link and all.
    token = "Zx9" * 30
    caplog.set_level(logging.DEBUG)
    server = ObservabilityServer(queue, "127.0.0.1:0")
    await server.start()
    try:
        caplog.clear()
        for raw in (b"GET /welcome?token=%s\x00 HTTP/1.1\r\n\r\n",
                    b"GE\x01T /welcome?a=1&token=%s HTTP/1.1\r\n\r\n"):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(raw % token.encode())
            await writer.drain()
            await reader.read(4096)
            writer.close()
            await writer.wait_closed()
    finally:
        await server.stop()
    lines = [r.getMessage() for r in http_records(caplog)]
    assert len(lines) == 2 and all("token=[redacted]" in line for line in lines), lines
    assert not any(token[:6] in line for line in lines)
