"""The service serves the API on its [http] listener (unless `[api] enabled = false`),
with the configured capabilities' modes; `signoff web` serves it too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from bot.api.store import TokenStore
from bot.service import Service
from bot.web.serve import serve
from taskqueue import load_config
from tests.bot.test_service import CONFIG


async def test_the_service_mounts_the_api(dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + '\n[http]\nlisten = "127.0.0.1:0"\n')
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await service.start()
    try:
        assert service.http is not None and service.queue is not None
        base = f"http://127.0.0.1:{service.http.port}/api/v1"
        token = await TokenStore(service.queue.pool).token_add("ci", None, ("ask",))
        worker_cap = next(iter(service.config.capabilities))
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as s:
            async with s.get(f"{base}/openapi.json") as doc:
                assert doc.status == 200 and (await doc.json())["openapi"] == "3.1.0"
            async with s.post(f"{base}/requests", json={"capability": worker_cap,
                                                        "question": "Go?"}) as refused:
                assert refused.status == 409
            async with s.post(f"{base}/requests", json={"capability": "ext",
                                                        "question": "Go?"}) as made:
                assert made.status == 201
    finally:
        await service.stop()
    path.write_text(CONFIG + '\n[http]\nlisten = "127.0.0.1:0"\n\n[api]\nenabled = false\n')
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await service.start()
    try:
        assert service.http is not None
        async with aiohttp.ClientSession() as s, s.get(
                f"http://127.0.0.1:{service.http.port}/api/v1/openapi.json") as gone:
            assert gone.status == 404
    finally:
        await service.stop()


async def test_signoff_web_serves_the_api(dsn: str, tmp_path: Path,
                                          monkeypatch: object) -> None:
    import socket

    import pytest

    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    mp.setenv("DATABASE_URL", dsn)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ready, stop = asyncio.Event(), asyncio.Event()
    running = asyncio.create_task(serve(load_config(None, env={}), f"127.0.0.1:{port}",
                                        ready=ready, stop=stop))
    await asyncio.wait_for(ready.wait(), 30)
    try:
        async with aiohttp.ClientSession() as s, s.get(
                f"http://127.0.0.1:{port}/api/v1/openapi.json") as doc:
            assert doc.status == 200
    finally:
        stop.set()
        await running
