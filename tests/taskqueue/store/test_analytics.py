"""TaskQueue.decision_stats against a seeded history with hand-computed answers.

percentile_cont(p) over n sorted times t[0..n-1] is t[k] + f * (t[k+1] - t[k]) where
k + f = p * (n - 1), rounded to the millisecond: the arithmetic is written next to each
expected figure, and they must match exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskqueue import BadInput, Decision, DecisionStats, Reminders, TaskQueue
from tests.taskqueue.decision_history import seed_history
from tests.taskqueue.factories import CAP, backdate, parked, sql


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
    assert (total.reminded, total.escalated) == (0, 0)
    assert total.to_json()["decided"] == 0


async def test_a_bad_capability_name_is_refused(queue: TaskQueue) -> None:
    with pytest.raises(BadInput):
        await queue.decision_stats(capability="x" * 201)


async def _retime(queue: TaskQueue, approval_id: int, votes: dict[str, int],
                  decided: int | None) -> None:
    """Asked an hour ago; each person's vote `votes[person]` seconds after the question, the
    approval decided `decided` seconds after it (None: still open)."""
    await sql(queue, "UPDATE approvals SET created_at = now() - interval '1 hour' WHERE id = %s",
              approval_id)
    for person, seconds in votes.items():
        await sql(queue, "UPDATE approval_votes v SET decided_at = a.created_at "
                         "+ make_interval(secs => %s) FROM approvals a "
                         "WHERE a.id = v.approval_id AND v.approval_id = %s AND v.person = %s",
                  seconds, approval_id, person)
    if decided is not None:
        await sql(queue, "UPDATE approvals SET decided_at = created_at "
                         "+ make_interval(secs => %s) WHERE id = %s", decided, approval_id)


async def test_every_approver_of_a_four_eyes_request_is_credited(queue: TaskQueue) -> None:
    # Parked first: a decided task would be claimed ahead of the next one.
    _, both = await parked(queue, required_approvals=2)
    _, open_ = await parked(queue, required_approvals=2)
    _, revised = await parked(queue)
    # Two of two: alice first (60 s after the question), then bob, whose approve decides it.
    await queue.approval_decide(both.id, Decision.APPROVED, "alice")
    await queue.approval_decide(both.id, Decision.APPROVED, "bob")
    await _retime(queue, both.id, {"alice": 60, "bob": 300}, 300)
    # One of two, still open: carol's approve is hers already.
    await queue.approval_decide(open_.id, Decision.APPROVED, "carol")
    await _retime(queue, open_.id, {"carol": 120}, None)
    # A one-person revise stays its decider's.
    await queue.approval_decide(revised.id, Decision.REVISED, "alice", note="shorter")
    await _retime(queue, revised.id, {}, 30)
    rows = by_scope(await queue.decision_stats())
    assert list(rows) == [("capability", CAP), ("person", "alice"), ("person", "bob"),
                          ("person", "carol"), ("total", None)]
    # The requests: one approved after 300 s, one revised after 30 s; [30, 300]:
    # p50 at 0.5 -> 165, p90 at 0.9 -> 30 + 0.9*270 = 273.
    assert figures(rows["capability", CAP]) == (3, 1, 1, 0, 0, 165, 273, 300)
    # alice: her approve 60 s after the question and her revise after 30: [30, 60]:
    # p50 45, p90 30 + 0.9*30 = 57.
    assert figures(rows["person", "alice"]) == (None, 1, 1, 0, None, 45, 57, 60)
    assert rows["person", "alice"].decided == 2
    assert figures(rows["person", "bob"]) == (None, 1, 0, 0, None, 300, 300, 300)
    assert figures(rows["person", "carol"]) == (None, 1, 0, 0, None, 120, 120, 120)
    assert figures(rows["total", None]) == figures(rows["capability", CAP])


async def test_a_window_counts_a_persons_vote_when_they_cast_it(queue: TaskQueue) -> None:
    _, both = await parked(queue, required_approvals=2)
    await queue.approval_decide(both.id, Decision.APPROVED, "alice")
    await queue.approval_decide(both.id, Decision.APPROVED, "bob")
    await sql(queue, "UPDATE approval_votes SET decided_at = now() - interval '3 days' "
                     "WHERE approval_id = %s AND person = 'alice'", both.id)
    rows = by_scope(await queue.decision_stats(since=datetime.now(UTC) - timedelta(days=1)))
    assert ("person", "alice") not in rows and rows["person", "bob"].approved == 1
    rows = by_scope(await queue.decision_stats(until=datetime.now(UTC) - timedelta(days=1)))
    # Nothing of the request's in that window, so no capability row; alice's vote is.
    assert list(rows) == [("person", "alice"), ("total", None)]
    assert rows["total", None].approved == 0 and rows["person", "alice"].approved == 1


async def test_reminders_and_escalations_sent_are_counted(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, remind_after_seconds=60, escalate_after_seconds=3600,
                               escalate_to=["carol"])
    _, reminded = await parked(queue)
    _, escalated = await parked(queue)
    await parked(queue)  # neither
    await parked(queue, capability="other")
    await backdate(queue, "approvals", "created_at", "2 minutes", "id = %s", reminded.id)
    await backdate(queue, "approvals", "created_at", "2 hours", "id = %s", escalated.id)
    await Reminders(queue).run_once()
    await queue.approval_decide(escalated.id, Decision.APPROVED, "alice")
    rows = by_scope(await queue.decision_stats())
    # The escalated one was past its reminder too: two reminders, one escalation.
    assert (rows["capability", CAP].reminded, rows["capability", CAP].escalated) == (2, 1)
    assert (rows["capability", "other"].reminded, rows["capability", "other"].escalated) == (
        0, 0)
    assert (rows["total", None].reminded, rows["total", None].escalated) == (2, 1)
    assert (rows["person", "alice"].reminded, rows["person", "alice"].escalated) == (None, None)
    assert rows["total", None].to_json()["reminded"] == 2
    # Sent before the window: not in it.
    [total] = await queue.decision_stats(since=datetime.now(UTC) + timedelta(minutes=1))
    assert (total.reminded, total.escalated) == (0, 0)
    narrowed = by_scope(await queue.decision_stats(capability="other"))
    assert narrowed["total", None].reminded == 0
