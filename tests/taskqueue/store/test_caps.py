"""Caps at claim time: max_running, max_parked and daily_new, under real concurrency."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest

from taskqueue import BadInput, Capability, Decision, TaskQueue

from ..factories import CAP, backdate, enqueue, in_threads, sql, sync_rows, value


def _seed(dsn: str, n: int, capability: str = CAP) -> None:
    sync_rows(dsn, "INSERT INTO tasks (capability) SELECT %s FROM generate_series(1, %s)",
              capability, n)


async def test_capability_without_a_row_has_no_caps(queue: TaskQueue) -> None:
    assert await queue.capability_get(CAP) == Capability(CAP)
    for _ in range(10):
        await enqueue(queue)
    claimed = [await queue.task_claim(CAP, "w") for _ in range(10)]
    assert all(t is not None for t in claimed)
    assert await queue.capability_list() == []


def test_sixteen_simultaneous_claimers_take_only_max_running(dsn: str) -> None:
    _seed(dsn, 20)
    sync_rows(dsn, "INSERT INTO capabilities (capability, max_running) VALUES (%s, 2)", CAP)

    async def work(q: TaskQueue, i: int) -> int | None:
        task = await q.task_claim(CAP, f"w{i}")
        return task.id if task else None

    got = [t for t in in_threads(16, dsn, work) if t is not None]
    assert len(got) == 2
    assert sync_rows(dsn, "SELECT count(*) AS n FROM tasks WHERE status = 'running'") == [
        {"n": 2}]


def test_max_running_holds_while_workers_claim_and_complete(dsn: str) -> None:
    _seed(dsn, 40)
    sync_rows(dsn, "INSERT INTO capabilities (capability, max_running) VALUES (%s, 2)", CAP)
    done = threading.Event()
    samples: list[int] = []

    def sample() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            while not done.is_set():
                cur = conn.execute("SELECT count(*) FROM tasks WHERE status = 'running'")
                samples.extend(n for (n,) in cur)

    async def work(q: TaskQueue, i: int) -> int:
        finished = 0
        while True:
            task = await q.task_claim(CAP, f"w{i}")
            if task is None:
                if await _left(q) == 0:
                    return finished
                await asyncio.sleep(0.002)
                continue
            await asyncio.sleep(0.003)
            await q.task_complete(task.id, f"w{i}", claim=task.claim)
            finished += 1

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        finished = in_threads(16, dsn, work)
    finally:
        done.set()
        sampler.join()
    assert sum(finished) == 40
    assert len(samples) > 10 and max(samples) <= 2
    assert sum(1 for n in finished if n) > 1, "only one worker ever got a task"


async def _left(q: TaskQueue) -> int:
    return int(await value(q, "SELECT count(*) FROM tasks WHERE status IN "
                              "('pending', 'running')"))


async def test_max_parked_holds_new_work_but_not_resumed_work(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_parked=2)
    a, b, c = [await enqueue(queue) for _ in range(3)]
    # Two new tasks in flight fill the ceiling: either could park.
    assert await _claim_ids(queue, 3) == [a, b]
    claims = await _claims(queue, [a, b])
    await queue.task_park(a, "w", "A?", claim=claims[a])
    await queue.task_release(b, "w", claim=claims[b])
    await queue.approval_decide_for_task(a, Decision.APPROVED, "alice")
    # The ceiling is still full: approved and released work is claimed, new work is not.
    assert await _claim_ids(queue, 3) == [a, b]
    claims = await _claims(queue, [a])
    await queue.task_complete(a, "w", claim=claims[a])
    assert await _claim_ids(queue, 2) == [c]


async def _claims(queue: TaskQueue, ids: list[int]) -> dict[int, str | None]:
    return {i: (await queue.task_get(i)).claim for i in ids}


async def _claim_ids(queue: TaskQueue, tries: int) -> list[int]:
    """The ids `tries` claims get, skipping the ones that get nothing."""
    claims = [await queue.task_claim(CAP, "w") for _ in range(tries)]
    return [t.id for t in claims if t is not None]


async def test_max_parked_counts_only_its_own_capability(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_parked=1)
    other = await enqueue(queue, "other")
    task = await queue.task_claim("other", "w")
    assert task is not None and task.id == other
    await queue.task_park(other, "w", "Other?", claim=task.claim)
    await enqueue(queue)
    assert await queue.task_claim(CAP, "w") is not None


async def test_daily_new_limits_first_claims_but_not_resumed_work(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, daily_new=2)
    for _ in range(4):
        await enqueue(queue)
    first, second = [await queue.task_claim(CAP, "w") for _ in range(2)]
    assert first is not None and second is not None
    assert await queue.task_claim(CAP, "w") is None
    await queue.task_release(first.id, "w", claim=first.claim)
    await queue.task_park(second.id, "w", "Go?", claim=second.claim)
    await queue.approval_decide_for_task(second.id, Decision.APPROVED, "alice")
    assert await _claim_ids(queue, 3) == [second.id, first.id]
    assert await value(queue, "SELECT count(*) FROM tasks WHERE first_claimed_at IS NULL") == 2


async def test_daily_new_does_not_count_first_claims_of_yesterday(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, daily_new=1)
    for _ in range(2):
        await enqueue(queue)
    assert await queue.task_claim(CAP, "w") is not None
    assert await queue.task_claim(CAP, "w") is None
    await backdate(queue, "tasks", "first_claimed_at", "1 day", "first_claimed_at IS NOT NULL")
    assert await queue.task_claim(CAP, "w") is not None


def _zone_at_local_hour(hours: range) -> str:
    """An Etc/GMT zone whose local hour is now in `hours` (whole-hour offsets cover all 24)."""
    now = datetime.now(UTC)
    for offset in range(-12, 15):
        name = f"Etc/GMT{-offset:+d}" if offset else "UTC"
        if (now + timedelta(hours=offset)).hour in hours:
            assert now.astimezone(ZoneInfo(name)).hour in hours
            return name
    raise AssertionError("no zone has that local hour")


async def test_daily_new_counts_the_day_in_the_capability_time_zone(queue: TaskQueue) -> None:
    # A first claim one hour ago is "today" where it is now 02:00-21:59, but "yesterday"
    # where it is now between midnight and 01:00.
    await queue.capability_set(CAP, daily_new=1)
    earlier, waiting = await enqueue(queue), await enqueue(queue)
    await sql(queue, "UPDATE tasks SET status = 'succeeded', "
                     "first_claimed_at = now() - interval '1 hour' WHERE id = %s", earlier)
    await queue.capability_set(CAP, day_timezone=_zone_at_local_hour(range(2, 22)))
    assert await queue.task_claim(CAP, "w") is None
    await queue.capability_set(CAP, day_timezone=_zone_at_local_hour(range(0, 1)))
    task = await queue.task_claim(CAP, "w")
    assert task is not None and task.id == waiting


def test_sixteen_simultaneous_claimers_take_only_daily_new(dsn: str) -> None:
    _seed(dsn, 20)
    sync_rows(dsn, "INSERT INTO capabilities (capability, daily_new) VALUES (%s, 3)", CAP)

    async def work(q: TaskQueue, i: int) -> list[int]:
        got = []
        while (task := await q.task_claim(CAP, f"w{i}")) is not None:
            await q.task_complete(task.id, f"w{i}", claim=task.claim)
            got.append(task.id)
        return got

    got = [t for ids in in_threads(16, dsn, work) for t in ids]
    assert len(got) == len(set(got)) == 3


async def test_capability_set_changes_only_what_it_is_given(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_running=2, day_timezone="Europe/Paris")
    cap = await queue.capability_set(CAP, daily_new=5)
    assert (cap.max_running, cap.daily_new, cap.day_timezone) == (2, 5, "Europe/Paris")
    assert cap.approval_ttl_seconds == 48 * 3600 and cap.max_attempts == 3
    cleared = await queue.capability_set(CAP, max_running=None)
    assert cleared.max_running is None and cleared.daily_new == 5
    assert await queue.capability_list() == [cleared]


async def test_capability_set_refuses_an_unknown_time_zone(queue: TaskQueue) -> None:
    with pytest.raises(BadInput, match="time zone"):
        await queue.capability_set(CAP, day_timezone="Mars/Olympus")
    assert await queue.capability_list() == []


@pytest.mark.parametrize(("changes", "match"), [
    ({"max_running": -1}, "max_running"),
    ({"max_parked": "3"}, "max_parked"),
    ({"lease_seconds": 0}, "lease_seconds"),
    ({"max_attempts": None}, "max_attempts"),
    ({"max_attempts": True}, "max_attempts"),
    ({"speed": 3}, "speed"),
    ({"day_timezone": ""}, "day_timezone"),
])
async def test_capability_set_refuses_bad_settings(offline: TaskQueue, changes: dict[str, Any],
                                                   match: str) -> None:
    with pytest.raises(BadInput, match=match):
        await offline.capability_set(CAP, **changes)


_MIXED = """
INSERT INTO tasks (capability, status, priority, first_claimed_at)
VALUES (%s, 'pending', 0, NULL), (%s, 'pending', 5, now()), (%s, 'approved', 0, now()),
       (%s, 'pending', 9, NULL), (%s, 'approved', 3, now()), (%s, 'pending', 0, now()),
       (%s, 'pending', 5, NULL)
RETURNING id, status, priority, first_claimed_at IS NOT NULL AS resumed"""


@pytest.mark.parametrize(("caps", "only_resumed"), [
    ({}, False),
    ({"max_running": 100}, False),
    ({"max_running": 100, "max_parked": 100, "daily_new": 100}, False),
    # Four resumed tasks are held already: the held cap admits no new work.
    ({"max_parked": 3}, True),
], ids=["uncapped", "max_running", "room_under_every_cap", "held_cap_full"])
@pytest.mark.parametrize("n", [3, 7])
async def test_a_capped_claim_takes_work_in_the_claims_own_order(
        queue: TaskQueue, dsn: str, caps: dict[str, int], only_resumed: bool, n: int) -> None:
    # Answered work first, then by priority, then oldest first: the same order whichever
    # path of signoff_claim runs (uncapped; capped, where resumed and new work are read
    # apart and merged), and only resumed work once the held cap is full.
    rows = sync_rows(dsn, _MIXED, *[CAP] * 7)
    if caps:
        await queue.capability_set(CAP, **caps)
    eligible = [r for r in rows if r["resumed"] or not only_resumed]
    order = sorted(eligible, key=lambda r: (r["status"] != "approved", -r["priority"], r["id"]))
    claimed = await queue.task_claim_many(CAP, "w", n)
    assert [t.id for t in claimed] == [r["id"] for r in order[:n]]
    assert [t.claimed_from.value for t in claimed if t.claimed_from] == [
        r["status"] for r in order[:n]]
