"""Live streams end when the server stops, also one a page opens after the stop began."""

from __future__ import annotations

import asyncio

import pytest

from bot.web.live import Live


async def test_close_ends_the_open_streams() -> None:
    live = Live()
    async with live.subscribed() as stream:
        live.publish()
        assert await stream.get() == "changed"
        with pytest.raises(TimeoutError):  # nothing more until something happens
            await asyncio.wait_for(stream.get(), 1)
        live.close()
        assert await asyncio.wait_for(stream.get(), 5) is None


async def test_a_stream_opened_after_close_ends_at_once() -> None:
    # A page's EventSource reconnects a second after its stream ended, possibly on a kept-alive
    # connection the stopping server still serves: that stream must not hold the shutdown.
    live = Live()
    live.close()
    async with live.subscribed() as stream:
        assert await asyncio.wait_for(stream.get(), 5) is None
    assert live.count == 0
