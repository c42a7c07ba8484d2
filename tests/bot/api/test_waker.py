"""The long-poll's waker hears an approval's change through NOTIFY (not a timer)."""

from __future__ import annotations

import asyncio

from bot.api.waker import Waker
from taskqueue import TaskQueue


async def test_a_decision_wakes_the_waiters_at_once(queue: TaskQueue, dsn: str) -> None:
    waker = Waker(dsn)
    try:
        asked, _ = await queue.request_park("deploys", "Go?", asked_by="ci")
        await waker.changed(0.01)  # subscribes
        await asyncio.sleep(1)  # the listener's LISTEN is in place
        waiting = asyncio.gather(*[waker.changed(60) for _ in range(3)])
        await asyncio.sleep(0.2)
        await queue.approval_decide_for_task(asked.id, "approved", "ada")
        await asyncio.wait_for(waiting, 10)  # long before the 60 s each would wait
        found = await asyncio.wait_for(
            queue.request_wait(asked.id, 60, changed=waker.changed), 10)
        assert found.status == "approved"
    finally:
        await waker.close()


async def test_without_a_dsn_it_only_sleeps(queue: TaskQueue) -> None:
    waker = Waker(None)
    asked, _ = await queue.request_park("deploys", "Go?", asked_by="ci")
    assert (await queue.request_wait(asked.id, 0.5, changed=waker.changed)).is_open
    await waker.close()
