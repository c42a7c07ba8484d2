"""A local Roblox Open Cloud place-publishing endpoint, speaking the real request shape.

`POST /universes/v1/{universeId}/places/{placeId}/versions?versionType=Published` with
`x-api-key` and the place file as the body; answers `{"versionNumber": N}`. Scripted
failures (status, headers, body) are answered first, one per request, without publishing;
status 0 publishes and then drops the connection before answering.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web

KEY = "test-roblox-key-5d1c"


@dataclass
class Published:
    universe: str
    place: str
    version_type: str
    content_type: str
    sha256: str
    version: int


@dataclass
class FakeOpenCloud:
    url: str = ""
    published: list[Published] = field(default_factory=list)
    requests: int = 0
    script: list[tuple[int, dict[str, str], str]] = field(default_factory=list)

    async def versions(self, request: web.Request) -> web.Response:
        self.requests += 1
        if request.headers.get("x-api-key") != KEY:
            return web.json_response({"code": "UNAUTHENTICATED", "message": "Invalid API Key"},
                                     status=401)
        ctype = request.headers.get("Content-Type", "")
        if ctype not in ("application/octet-stream", "application/xml"):
            return web.json_response({"message": f"bad content type {ctype}"}, status=400)
        body = await request.read()
        status, headers, text = self.script.pop(0) if self.script else (200, {}, "")
        if status not in (0, 200):
            return web.Response(status=status, headers=headers, text=text)
        self.published.append(Published(
            request.match_info["universe"], request.match_info["place"],
            request.query.get("versionType", ""), ctype, hashlib.sha256(body).hexdigest(),
            len(self.published) + 1))
        if status == 0:  # published, but the connection drops before the answer
            assert request.transport is not None
            request.transport.close()
        return web.json_response({"versionNumber": len(self.published)})


@asynccontextmanager
async def running_cloud() -> AsyncIterator[FakeOpenCloud]:
    fake = FakeOpenCloud()
    app = web.Application(client_max_size=200 * 1024 * 1024)
    app.router.add_post("/universes/v1/{universe}/places/{place}/versions", fake.versions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    fake.url = f"http://{host}:{port}"
    try:
        yield fake
    finally:
        await runner.cleanup()
