"""wait_at_most, the long-running loops' one timed wait: it answers whether the event was
set, and a cancel that arrives as the event is set still cancels (a stop never hangs)."""

from __future__ import annotations

import asyncio

import pytest

from taskqueue import wait_at_most


async def test_it_returns_true_once_the_event_is_set() -> None:
    event = asyncio.Event()
    waiting = asyncio.create_task(wait_at_most(event, 600))
    await asyncio.sleep(0)
    event.set()
    assert await waiting is True


async def test_it_returns_false_when_the_time_runs_out() -> None:
    assert await wait_at_most(asyncio.Event(), 0.01) is False


async def test_an_event_already_set_returns_at_once() -> None:
    event = asyncio.Event()
    event.set()
    assert await wait_at_most(event, 600) is True


async def test_a_cancel_that_arrives_with_the_event_still_cancels() -> None:
    """Python 3.11's asyncio.wait_for returned instead of raising here, and the loop that
    waited ran on after its stop (issue 37)."""
    event = asyncio.Event()
    waiting = asyncio.create_task(wait_at_most(event, 600))
    await asyncio.sleep(0)  # the task now waits on the event
    event.set()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert waiting.cancelled()
