"""One aiohttp server on 127.0.0.1 (random port) with the fake boards, forms and model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web

from .fake_boards import BoardState, add_board_routes
from .fake_forms import FormState, add_form_routes
from .fake_model import ModelState, add_model_routes


@dataclass
class FakeSite:
    base: str  # http://127.0.0.1:PORT
    forms: FormState
    model: ModelState
    boards: BoardState

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


@asynccontextmanager
async def running_site() -> AsyncIterator[FakeSite]:
    """Serve the fakes for the duration of the block."""
    app = web.Application()
    site = FakeSite("", FormState(), ModelState(), BoardState())
    add_board_routes(app, site.boards)
    add_form_routes(app, site.forms)
    add_model_routes(app, site.model)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    host, port = runner.addresses[0][:2]
    site.base = f"http://{host}:{port}"
    try:
        yield site
    finally:
        await runner.cleanup()
