"""Listener: NOTIFY reaches the callback; a terminated connection comes back by itself."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from taskqueue import TASKS_CHANNEL, Listener, TaskQueue
from tests.taskqueue.worker_helpers import terminate_backends, wait_for


@pytest.fixture
async def heard(dsn: str) -> AsyncIterator[tuple[Listener, list[tuple[str, str | None]]]]:
    got: list[tuple[str, str | None]] = []
    listener = Listener(dsn, [TASKS_CHANNEL], lambda c, p: got.append((c, p)))
    runner = asyncio.create_task(listener.run())
    await asyncio.wait_for(listener.connected.wait(), 5)
    yield listener, got
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner


async def _has(got: list[tuple[str, str | None]], item: tuple[str, str | None]) -> bool:
    return item in got


async def test_an_enqueue_is_heard_with_its_capability(
        queue: TaskQueue, heard: tuple[Listener, list[tuple[str, str | None]]]) -> None:
    _, got = heard
    await queue.task_enqueue("mail", {})
    await wait_for(lambda: _has(got, (TASKS_CHANNEL, "mail")), timeout=1)


async def test_listener_reconnects_after_its_backend_is_terminated(
        queue: TaskQueue, dsn: str,
        heard: tuple[Listener, list[tuple[str, str | None]]]) -> None:
    listener, got = heard
    assert terminate_backends(dsn) >= 1
    # Back again: it says so (payload None: "you may have missed some") and hears new ones.
    await wait_for(lambda: _has(got, (TASKS_CHANNEL, None)), timeout=5)
    await asyncio.wait_for(listener.connected.wait(), 5)
    await queue.task_enqueue("mail", {})
    await wait_for(lambda: _has(got, (TASKS_CHANNEL, "mail")), timeout=1)
    assert listener.reconnects == 2
