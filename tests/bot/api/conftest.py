"""Fixtures of the HTTP API's tests: the API served over real HTTP on 127.0.0.1 (on the
test's own event loop, so the test's subprocesses can call it), and tokens."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.api.app import ApiApp
from bot.api.routes import install
from bot.api.settings import ApiSettings
from taskqueue import TaskQueue

ALL = ("ask", "decide", "read", "work")


@dataclass
class Api:
    """The served API: its base URL, its queue and app, and a client session."""

    url: str
    queue: TaskQueue
    app: ApiApp
    http: aiohttp.ClientSession
    dsn: str

    async def token(self, name: str, person: str | None = None,
                    scopes: tuple[str, ...] = ALL) -> str:
        token = await self.app.store.token_add(name, person, scopes)
        assert token is not None
        return token

    async def call(self, method: str, path: str, token: str | None = None, *,
                   json: Any = None, **kwargs: Any) -> tuple[int, Any, dict[str, str]]:
        """(status, the JSON answer or the text, the headers)."""
        headers = kwargs.pop("headers", {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with self.http.request(method, self.url + path, json=json, headers=headers,
                                     **kwargs) as r:
            text = await r.text()
            try:
                body: Any = await r.json(content_type=None) if text else None
            except ValueError:
                body = text
            return r.status, body, dict(r.headers)

    def env(self, **more: str) -> dict[str, str]:
        """The environment for a `signoff` child process on this test's database."""
        return {**os.environ, "DATABASE_URL": self.dsn, **more}


async def serve_api(queue: TaskQueue, settings: ApiSettings,
                    modes: dict[str, str]) -> tuple[web.AppRunner, ApiApp, int]:
    api = ApiApp(queue, settings, modes=modes)
    app = web.Application()
    install(api, app)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert server is not None
    port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
    return runner, api, port


@pytest.fixture
def api_settings() -> ApiSettings:
    return ApiSettings(rate_per_minute=60_000, burst=10_000)


@pytest.fixture
async def api(queue: TaskQueue, dsn: str, api_settings: ApiSettings) -> AsyncIterator[Api]:
    runner, app, port = await serve_api(queue, api_settings, {"mail": "pool",
                                                              "deploys": "external"})
    try:
        async with aiohttp.ClientSession() as http:
            yield Api(f"http://127.0.0.1:{port}", queue, app, http, dsn)
    finally:
        await runner.cleanup()
