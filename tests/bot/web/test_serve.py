"""`signoff web` on its own: over TLS the cookies are Secure; it stops cleanly."""

from __future__ import annotations

import asyncio
import re
import ssl
import subprocess
from pathlib import Path

import aiohttp
import pytest

from bot.web.serve import serve
from taskqueue import Config
from tests.taskqueue.cli_helpers import closed_port


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
