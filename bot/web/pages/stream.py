"""The live stream (server-sent events: `changed` on every park, decision, expiry or
cancel anywhere) and the static files (one script, two style sheets)."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path

from aiohttp import web

from bot.web.app import public, web_app
from bot.web.evidence import pygments_css

STATIC = Path(__file__).resolve().parents[1] / "static"
# A comment line this often keeps proxies from closing a quiet stream (seconds).
KEEPALIVE = 15.0
_TYPES = {"app.js": "text/javascript", "style.css": "text/css"}


async def events(request: web.Request) -> web.StreamResponse:
    app = web_app(request)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store"})
    await response.prepare(request)
    try:
        async with app.live.subscribed() as stream:
            await _stream(response, stream)
        await response.write_eof()
    except ConnectionResetError:
        pass  # the page went away
    return response


async def _stream(response: web.StreamResponse, stream: asyncio.Queue[str | None]) -> None:
    # Sent first, so the page re-reads the inbox after every (re)connection.
    await response.write(b"retry: 1000\nevent: hello\ndata: {}\n\n")
    while True:
        try:
            async with asyncio.timeout(KEEPALIVE):
                event = await stream.get()
        except TimeoutError:
            await response.write(b": keep-alive\n\n")
            continue
        if event is None:  # the server is stopping
            return
        await response.write(f"event: {event}\ndata: {{}}\n\n".encode())


@cache
def _static(name: str) -> bytes:
    if name == "pygments.css":
        return pygments_css().encode()
    return (STATIC / name).read_bytes()


@public
async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in _TYPES and name != "pygments.css":
        raise web.HTTPNotFound()
    return web.Response(body=_static(name), content_type=_TYPES.get(name, "text/css"),
                        charset="utf-8", headers={"Cache-Control": "no-cache"})


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/events", events)
    router.add_get("/static/{name}", static)
