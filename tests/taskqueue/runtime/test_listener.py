"""Listening: NOTIFY reaches each subscriber of its channel over one shared connection; a
terminated connection comes back by itself and says so."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from taskqueue import NOTIFICATIONS_CHANNEL, TASKS_CHANNEL, Listener, ListenerHub, TaskQueue
from taskqueue.runtime.listener import OnNotify
from tests.taskqueue.worker_helpers import (
    listener_backends,
    terminate_backends,
    terminate_listener,
    wait_for,
)


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


# -- the shared hub ----------------------------------------------------------------------

Heard = list[tuple[str, str | None]]


def recorder() -> tuple[Heard, OnNotify]:
    got: Heard = []
    return got, lambda c, p: got.append((c, p))


async def _listeners(dsn: str, n: int) -> bool:
    return len(await asyncio.to_thread(listener_backends, dsn)) == n


async def test_subscribers_share_one_connection_and_hear_only_their_channels(
        queue: TaskQueue, dsn: str) -> None:
    hub = ListenerHub(dsn)
    (tasks, on_task), (notes, on_note) = recorder(), recorder()
    async with hub.subscribed([TASKS_CHANNEL], on_task) as one, \
            hub.subscribed([NOTIFICATIONS_CHANNEL], on_note) as two:
        await asyncio.wait_for(one.connected.wait(), 5)
        await asyncio.wait_for(two.connected.wait(), 5)
        assert len(listener_backends(dsn)) == 1
        await queue.task_enqueue("mail", {})
        await queue.notification_send("Hello", "there")
        await wait_for(lambda: _has(tasks, (TASKS_CHANNEL, "mail")), timeout=2)
        await wait_for(lambda: _async(len(notes) == 1), timeout=2)
        assert all(c == TASKS_CHANNEL for c, _ in tasks)
        assert all(c == NOTIFICATIONS_CHANNEL for c, _ in notes)
    # The last one out closes the connection.
    await wait_for(lambda: _listeners(dsn, 0), timeout=5)


async def test_the_loops_shared_hub_is_one_per_database() -> None:
    a = ListenerHub.shared("postgresql://postgres@127.0.0.1:5432/x")
    assert ListenerHub.shared("host=127.0.0.1 port=5432 user=postgres dbname=x") is a
    assert ListenerHub.shared("postgresql://postgres@127.0.0.1:5432/y") is not a


async def test_after_a_terminated_backend_every_subscriber_hears_none_then_new_ones(
        queue: TaskQueue, dsn: str) -> None:
    hub = ListenerHub(dsn)
    (tasks, on_task), (notes, on_note) = recorder(), recorder()
    async with hub.subscribed([TASKS_CHANNEL], on_task) as one, \
            hub.subscribed([NOTIFICATIONS_CHANNEL], on_note) as two:
        await asyncio.wait_for(two.connected.wait(), 5)
        [before] = listener_backends(dsn)
        assert terminate_listener(dsn) == 1
        await wait_for(lambda: _has(tasks, (TASKS_CHANNEL, None)), timeout=5)
        await wait_for(lambda: _has(notes, (NOTIFICATIONS_CHANNEL, None)), timeout=5)
        await asyncio.wait_for(one.connected.wait(), 5)
        assert hub.connections == 2 and one.connections == two.connections == 2
        [after] = listener_backends(dsn)
        assert after != before
        await queue.task_enqueue("mail", {})
        await queue.notification_send("Hello", "again")
        await wait_for(lambda: _has(tasks, (TASKS_CHANNEL, "mail")), timeout=2)
        await wait_for(lambda: _async(any(p for _, p in notes)), timeout=2)


async def test_an_unsubscribed_callback_hears_nothing_more(queue: TaskQueue, dsn: str) -> None:
    hub = ListenerHub(dsn)
    (stays, on_stays), (leaves, on_leaves) = recorder(), recorder()
    async with hub.subscribed([TASKS_CHANNEL], on_stays) as staying:
        leaving = hub.subscribe([TASKS_CHANNEL, NOTIFICATIONS_CHANNEL], on_leaves)
        await asyncio.wait_for(leaving.connected.wait(), 5)
        await asyncio.wait_for(staying.connected.wait(), 5)
        await leaving.close()
        assert not leaving.connected.is_set()
        await queue.task_enqueue("mail", {})
        await queue.notification_send("Hello", "nobody")
        await wait_for(lambda: _has(stays, (TASKS_CHANNEL, "mail")), timeout=2)
        await asyncio.sleep(0.2)
        assert leaves == []
        assert len(listener_backends(dsn)) == 1


async def test_a_subscription_made_while_listening_uses_the_live_connection(
        queue: TaskQueue, dsn: str) -> None:
    hub = ListenerHub(dsn)
    (first, on_first), (later, on_later) = recorder(), recorder()
    async with hub.subscribed([TASKS_CHANNEL], on_first) as one:
        await asyncio.wait_for(one.connected.wait(), 5)
        [pid] = listener_backends(dsn)
        async with hub.subscribed([NOTIFICATIONS_CHANNEL], on_later) as two:
            await asyncio.wait_for(two.connected.wait(), 5)
            assert listener_backends(dsn) == [pid] and hub.connections == 1
            await queue.notification_send("Hello", "late")
            await wait_for(lambda: _async(len(later) == 1), timeout=2)
            assert later[0][1] is not None  # a first connection is no reconnect
    assert first == []


async def test_a_failing_subscriber_does_not_deafen_the_others(
        queue: TaskQueue, dsn: str) -> None:
    hub = ListenerHub(dsn)
    got, on_notify = recorder()

    def broken(channel: str, payload: str | None) -> None:
        raise RuntimeError("subscriber bug")

    async with hub.subscribed([TASKS_CHANNEL], broken), \
            hub.subscribed([TASKS_CHANNEL], on_notify) as sub:
        await asyncio.wait_for(sub.connected.wait(), 5)
        await queue.task_enqueue("mail", {})
        await queue.task_enqueue("post", {})
        await wait_for(lambda: _has(got, (TASKS_CHANNEL, "post")), timeout=2)
    assert hub.connections == 1


async def _async(value: bool) -> bool:
    return value
