"""The claim's plans: planned once per session (generic), and still on the indexes beside
many finished rows, capped and uncapped, for any n. auto_explain shows the statements that
run inside signoff_claim, which a plain EXPLAIN of the call would hide."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest

from taskqueue.store.queries import query

_FINISHED = """
INSERT INTO tasks (capability, status, first_claimed_at, finished_at)
SELECT %s, 'succeeded', now() - interval '1 day', now() - interval '1 day'
FROM generate_series(1, %s)"""
_PENDING = "INSERT INTO tasks (capability) SELECT %s FROM generate_series(1, %s)"
# (finished, pending) rows per capability: a long history, then a backlog (where a plan
# that sorts every pending row would look cheap to the planner).
_SHAPES = {"history": (20000, 50), "backlog": (500, 10000)}


def _explaining(conn: psycopg.Connection[Any]) -> list[str]:
    """Turn on auto_explain for every statement `conn` runs, nested ones included; the
    list its plans are appended to."""
    plans: list[str] = []
    conn.add_notice_handler(lambda d: plans.append(d.message_primary or ""))
    for setting in ("LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
                    "SET auto_explain.log_nested_statements = on",
                    "SET client_min_messages = log"):
        conn.execute(setting)
    return plans


def _assert_on_indexes(plans: list[str]) -> str:
    """The plans read tasks through the claimable index and never scan it whole; their text."""
    text = "\n".join(plans)
    assert "tasks_claimable_idx" in text
    assert not re.search(r"Seq Scan on tasks\b", text), text
    return text


def _nested_plans(dsn: str, capability: str, n: int) -> list[str]:
    """The plans of every statement one claim ran (its third call: plans are cached by then)."""
    with psycopg.connect(dsn) as conn:
        plans = _explaining(conn)
        params = {"capability": capability, "worker": "w", "lease": None, "n": n,
              "answered_only": False}
        for _ in range(3):
            plans.clear()
            claimed = conn.execute(query("task_claim"), params, prepare=True).fetchall()
        assert len(claimed) == n
        conn.rollback()
    return plans


@pytest.mark.parametrize("capped", [False, True], ids=["uncapped", "capped"])
@pytest.mark.parametrize("n", [1, 10])
@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_the_claim_reads_tasks_through_indexes_only(dsn: str, capped: bool, n: int,
                                                    shape: str) -> None:
    finished, pending = _SHAPES[shape]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for capability in ("plan", "other"):
            conn.execute(_FINISHED, (capability, finished))
            conn.execute(_PENDING, (capability, pending))
        if capped:
            conn.execute("INSERT INTO capabilities (capability, max_running, max_parked, "
                         "daily_new) VALUES ('plan', 1000, 1000, 1000)")
        conn.execute("VACUUM ANALYZE tasks")
    text = _assert_on_indexes(_nested_plans(dsn, "plan", n))
    if capped:
        assert "pg_advisory_xact_lock" in text
        for index in ("tasks_active_idx", "tasks_held_idx", "tasks_first_claimed_idx"):
            assert index in text


@pytest.mark.parametrize("capped", [False, True], ids=["uncapped", "capped"])
def test_plans_cached_on_an_empty_queue_stay_on_the_indexes_as_it_grows(
        dsn: str, capped: bool) -> None:
    # A worker's session plans the claim once, maybe while the queue is empty; the plan it
    # keeps must still be an index plan when the table has grown.
    params = {"capability": "plan", "worker": "w", "lease": None, "n": 2,
              "answered_only": False}
    with psycopg.connect(dsn, autocommit=True) as admin, psycopg.connect(dsn) as conn:
        if capped:
            admin.execute("INSERT INTO capabilities (capability, max_running, max_parked, "
                          "daily_new) VALUES ('plan', 1000, 1000, 1000)")
        admin.execute(_PENDING, ("plan", 2))
        admin.execute("VACUUM ANALYZE tasks")
        plans = _explaining(conn)
        for _ in range(3):  # planned, generic, cached: on a table of two rows
            conn.execute(query("task_claim"), params, prepare=True).fetchall()
            conn.commit()
        admin.execute(_FINISHED, ("plan", 20000))
        admin.execute(_PENDING, ("plan", 20000))
        plans.clear()
        claimed = conn.execute(query("task_claim"), params, prepare=True).fetchall()
        conn.rollback()
    assert len(claimed) == 2
    _assert_on_indexes(plans)


@pytest.mark.parametrize("capped", [False, True], ids=["uncapped", "capped"])
def test_an_answered_only_claim_never_reads_the_backlog_behind_the_answers(
        dsn: str, capped: bool) -> None:
    # The answer slot claims when a person answered, while 10,000 new tasks wait: the
    # approved rows lead the claimable index, and the scan must stop where they end.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(_PENDING, ("plan", 10000))
        conn.execute("UPDATE tasks SET status = 'approved', first_claimed_at = now() "
                     "WHERE id IN (SELECT id FROM tasks ORDER BY id DESC LIMIT 3)")
        if capped:
            conn.execute("INSERT INTO capabilities (capability, max_running) "
                         "VALUES ('plan', 1000)")
        conn.execute("VACUUM ANALYZE tasks")
    with psycopg.connect(dsn) as conn:
        plans = _explaining(conn)
        conn.execute("SET auto_explain.log_analyze = on")
        conn.commit()  # the settings stay; each claim below is rolled back
        params = {"capability": "plan", "worker": "w", "lease": None, "n": 10,
                  "answered_only": True}
        for _ in range(3):
            plans.clear()
            claimed = conn.execute(query("task_claim"), params, prepare=True).fetchall()
            conn.rollback()
    assert len(claimed) == 3
    text = _assert_on_indexes(plans)
    # An index condition, not a filter over the 10,000 rows behind the answers.
    assert "Index Cond: ((capability = $1) AND ((status = 'approved'::text) = true))" in text
    assert "actual time" in text and "rows=3 loops=1" in text
