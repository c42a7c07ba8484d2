"""TaskQueue.decision_stats against a seeded history with hand-computed answers.

percentile_cont(p) over n sorted times t[0..n-1] is t[k] + f * (t[k+1] - t[k]) where
k + f = p * (n - 1), rounded to the millisecond: the arithmetic is written next to each
expected figure, and they must match exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskqueue import BadInput, DecisionStats, TaskQueue
from tests.taskqueue.decision_history import seed_history


def by_scope(rows: list[DecisionStats]) -> dict[tuple[str, str | None], DecisionStats]:
    return {(r.scope, r.capability if r.scope == "capability" else r.person): r
            for r in rows}


def figures(row: DecisionStats) -> tuple:  # type: ignore[type-arg]
    return (row.requests, row.approved, row.revised, row.skipped, row.expired,
            row.p50_seconds, row.p90_seconds, row.max_seconds)


async def test_the_last_30_days_per_capability_person_and_total(queue: TaskQueue) -> None:
    await seed_history(queue)
    since = datetime.now(UTC) - timedelta(days=30)
    rows = by_scope(await queue.decision_stats(since=since))
    assert list(rows) == [("capability", "deploy"), ("capability", "mail"),
                          ("person", "alice"), ("person", "bob"), ("total", None)]
    # deploy: times [30, 60, 120, 300, 600]; p50 at 0.5*4 = 2 -> 120;
    # p90 at 0.9*4 = 3.6 -> 300 + 0.6*(600-300) = 480. Requests: 7 asked (one still open).
    assert figures(rows["capability", "deploy"]) == (7, 3, 1, 1, 1, 120, 480, 600)
    # mail: [10, 20]; p50 at 0.5 -> 10 + 0.5*10 = 15; p90 at 0.9 -> 10 + 0.9*10 = 19.
    assert figures(rows["capability", "mail"]) == (3, 2, 0, 0, 1, 15, 19, 20)
    # alice: [10, 20, 60, 120, 300]; p50 at 2 -> 60; p90 at 3.6 -> 120 + 0.6*180 = 228.
    # A person's requests and expiries are no one's: None.
    assert figures(rows["person", "alice"]) == (None, 5, 0, 0, None, 60, 228, 300)
    # bob: [30, 600]; p50 at 0.5 -> 30 + 0.5*570 = 315; p90 at 0.9 -> 30 + 0.9*570 = 543.
    assert figures(rows["person", "bob"]) == (None, 0, 1, 1, None, 315, 543, 600)
    # all: [10, 20, 30, 60, 120, 300, 600]; p50 at 0.5*6 = 3 -> 60;
    # p90 at 0.9*6 = 5.4 -> 300 + 0.4*300 = 420.
    assert figures(rows["total", None]) == (10, 5, 1, 1, 2, 60, 420, 600)
    assert rows["total", None].decided == 7


async def test_without_since_the_older_history_counts(queue: TaskQueue) -> None:
    await seed_history(queue)
    rows = by_scope(await queue.decision_stats())
    # deploy: [30, 60, 120, 300, 600, 9999]; p50 at 0.5*5 = 2.5 -> 120 + 0.5*180 = 210;
    # p90 at 0.9*5 = 4.5 -> 600 + 0.5*9399 = 5299.5.
    assert figures(rows["capability", "deploy"]) == (
        9, 4, 1, 1, 2, 210, 5299.5, 9999)
    assert figures(rows["person", "carol"]) == (None, 1, 0, 0, None, 9999, 9999, 9999)
    assert rows["total", None].requests == 12 and rows["total", None].expired == 3


async def test_a_capability_filter_narrows_people_and_total(queue: TaskQueue) -> None:
    await seed_history(queue)
    rows = by_scope(await queue.decision_stats(capability="mail"))
    assert list(rows) == [("capability", "mail"), ("person", "alice"), ("total", None)]
    assert figures(rows["person", "alice"]) == (None, 2, 0, 0, None, 15, 19, 20)
    assert figures(rows["total", None]) == figures(rows["capability", "mail"])


async def test_a_window_counts_what_was_asked_and_settled_inside_it(queue: TaskQueue) -> None:
    ids = await seed_history(queue)
    now = datetime.now(UTC)
    # Only the 40-day-old pair: carol's approve (asked 9999 s before) and an expiry.
    rows = by_scope(await queue.decision_stats(since=now - timedelta(days=41),
                                               until=now - timedelta(days=39)))
    assert figures(rows["capability", "deploy"]) == (2, 1, 0, 0, 1, 9999, 9999, 9999)
    assert ("capability", "mail") not in rows and len(ids) == 12


async def test_nothing_decided_is_one_total_row_of_zeros(queue: TaskQueue) -> None:
    [total] = await queue.decision_stats()
    assert figures(total) == (0, 0, 0, 0, 0, None, None, None) and total.scope == "total"
    assert total.to_json()["decided"] == 0


async def test_a_bad_capability_name_is_refused(queue: TaskQueue) -> None:
    with pytest.raises(BadInput):
        await queue.decision_stats(capability="x" * 201)
