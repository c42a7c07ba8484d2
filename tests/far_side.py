"""A far side for gated actions in tests: an HTTP message endpoint on 127.0.0.1 that counts
every request and honours an `Idempotency-Key` header the way payment and mail APIs do (a
repeated key gets the first answer back and delivers nothing again)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class FarSide:
    url: str = ""
    requests: int = 0
    delivered: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Scripted statuses answered first (without delivering), one per request.
    script: list[int] = field(default_factory=list)
    # Set: deliver, then hold the answer until the test releases it (a worker dies meanwhile).
    hold: asyncio.Event | None = None

    async def messages(self, request: web.Request) -> web.Response:
        self.requests += 1
        body = await request.json()
        if self.script:
            return web.json_response({"error": "scripted"}, status=self.script.pop(0))
        key = request.headers.get("Idempotency-Key")
        if key and key in self.answers:
            return web.json_response(self.answers[key])
        self.delivered.append(body)
        answer = {"id": len(self.delivered)}
        if key:
            self.answers[key] = answer
        if self.hold is not None:
            await self.hold.wait()
        return web.json_response(answer, status=201)

    async def lookup(self, request: web.Request) -> web.Response:
        key = request.match_info["key"]
        if key in self.answers:
            return web.json_response(self.answers[key])
        return web.json_response({"error": "unknown key"}, status=404)


@asynccontextmanager
async def running_far_side() -> AsyncIterator[FarSide]:
    fake = FarSide()
    app = web.Application()
    app.router.add_post("/messages", fake.messages)
    app.router.add_get("/messages/by-key/{key}", fake.lookup)
    runner = web.AppRunner(app, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    fake.url = f"http://{host}:{port}"
    try:
        yield fake
    finally:
        if fake.hold is not None:
            fake.hold.set()
        await runner.cleanup()
