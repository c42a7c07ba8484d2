"""The decision waiters' waker (the API's long-polls, `signoff ask --wait`) hears an
approval's change through NOTIFY, not a timer: with the once-a-second read and the
quarter-second poll both pushed out to a minute, a decision still ends the wait at once."""

from __future__ import annotations

import asyncio

import pytest

from taskqueue import ApprovalWaker, TaskQueue
from taskqueue.cli.asking import open_asker
from taskqueue.store import requests

NEVER = 60.0  # the reads' periods in these tests: a wait that ends sooner was woken


@pytest.fixture
def no_timed_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(requests, "WAIT_POLL_SECONDS", NEVER)
    monkeypatch.setattr(requests, "CHANGED_CHECK_SECONDS", NEVER)


async def test_a_decision_wakes_the_waiters_at_once(queue: TaskQueue, dsn: str,
                                                    no_timed_reads: None) -> None:
    waker = ApprovalWaker(dsn)
    try:
        asked, _ = await queue.request_park("deploys", "Go?", asked_by="ci")
        await waker.listen()
        waiting = asyncio.gather(*[waker.changed(60) for _ in range(3)])
        await asyncio.sleep(0.2)
        await queue.approval_decide_for_task(asked.id, "approved", "ada")
        await asyncio.wait_for(waiting, 10)  # long before the 60 s each would wait
        found = await asyncio.wait_for(
            queue.request_wait(asked.id, 60, changed=waker.changed), 10)
        assert found.status == "approved"
    finally:
        await waker.close()


async def test_signoff_ask_wait_is_woken_by_the_decision(
        queue: TaskQueue, dsn: str, no_timed_reads: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", dsn)
    async with open_asker(None, None, "ci") as asker:
        asked = await asker.park("deploys", "Deploy?")
        waiting = asyncio.create_task(asker.wait(asked["id"], None))
        await asyncio.sleep(1)  # the wait has read the request and sleeps on its waker
        assert not waiting.done()
        await queue.approval_decide_for_task(asked["id"], "approved", "ada")
        found = await asyncio.wait_for(waiting, 10)
    assert found["status"] == "approved"


async def test_without_a_dsn_it_only_sleeps(queue: TaskQueue) -> None:
    waker = ApprovalWaker(None)
    asked, _ = await queue.request_park("deploys", "Go?", asked_by="ci")
    await waker.listen()  # nothing to listen on: returns at once
    assert (await queue.request_wait(asked.id, 0.5, changed=waker.changed)).is_open
    await waker.close()
