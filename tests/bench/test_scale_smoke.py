"""bench.scale runs end to end at tiny sizes (2,000 finished tasks, 500 decisions, 100 open
approvals) and prints its figures with their goals; its load reads back through the public
API as the queue's own history. The figures are reported, never checked."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
import pytest

from bench import scale, scale_web
from bench.database import database_drop, dsn_for
from bench.scale_load import chunks
from taskqueue import Decision, Status, TaskQueue
from tests.conftest import ADMIN_DSN

pytestmark = pytest.mark.slow

LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}
FIGURES = ("claim", "tasks_page", "inbox", "stats_decisions", "prune")


def _name() -> str:
    return f"signoff_bench_scale_{uuid.uuid4().hex[:10]}"


def _gone(name: str) -> bool:
    with psycopg.connect(ADMIN_DSN) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone() is None


def test_each_figure_has_its_goal_and_the_load_reads_back_as_the_queues_own() -> None:
    # One database for both (--keep, dropped here): a DROP DATABASE waits for a checkpoint,
    # seconds to minutes on a busy machine.
    name = _name()
    try:
        doc = asyncio.run(scale.main(["--dsn", ADMIN_DSN, "--database", name, "--quick",
                                      "--no-checkpoint", "--keep"]))
        _check_figures(doc)
        asyncio.run(_check_history(dsn_for(ADMIN_DSN, name)))
    finally:
        asyncio.run(database_drop(ADMIN_DSN, name))
    assert _gone(name)


def _check_figures(doc: dict[str, Any]) -> None:
    assert doc["exactly_once"] is True
    assert doc["sizes"] == scale.QUICK
    assert doc["load"]["counts"] == {"finished": 2000, "parked": 100, "decided": 500,
                                     "open": 100, "votes": 375, "owed": 0}
    assert doc["load"]["decided_every"] == 4
    assert {t["name"] for t in doc["load"]["tables"]} >= {"tasks", "task_events", "approvals"}
    assert set(doc["met"]) == set(FIGURES)
    for figure in FIGURES:
        assert isinstance(doc[figure]["met"], bool) and doc[figure]["goal"]
        assert doc[figure]["seconds"] >= 0
    claim = doc["claim"]
    for side in ("like_for_like", "bare_waits_for_flush"):
        assert set(claim[side]["claim"]) == set(claim[side]["bare_claim"]) == LATENCY
        assert claim[side]["tasks"] == 20
    pages = doc["tasks_page"]["pages"]
    assert set(scale.tasks_page_cases()) < set(pages)
    assert pages["status failed (8 % of the undecided)"]["rows"] == 51
    inbox = doc["inbox"]
    assert inbox["reads"]["open"] == 100 and inbox["reads"]["cards"] == 25
    assert set(inbox["served"]["ttfb_ms"]) == set(scale_web.PATHS)
    stats = doc["stats_decisions"]
    assert stats["decisions_counted"] == 500 and stats["requests_counted"] == 600
    assert stats["cli_lines"] > stats["rows"] > 0
    prune = doc["prune"]
    assert prune["command"].startswith("signoff prune --older-than ")
    assert prune["report"]["tasks"] >= 400 and prune["per_s"] > 0


async def _check_history(dsn: str) -> None:
    """A decided task as `signoff show` reads it (task 1000, past the pruned oldest: its
    approval 250 is an approve), and an open approval that a person can still decide."""
    async with TaskQueue.connect(dsn) as q:
        approved = await q.task_detail(1000)
        assert approved.task.status is Status.SUCCEEDED
        approval = approved.approvals[0]
        assert approval.id == 250 and approval.decision is Decision.APPROVED
        assert [(v.by, v.counted) for v in approval.approvals] == [(approval.decided_by, True)]
        assert [e.kind for e in approved.events] == [
            "enqueued", "claimed", "parked", "notified", "decided", "notified", "claimed",
            "completed"]
        open_ids = await q.approval_list_open_ids()
        assert open_ids == list(range(501, 601))
        decided = await q.approval_decide(open_ids[0], Decision.APPROVED, "alice")
        assert not decided.is_open
        assert (await q.task_get(decided.task_id)).status is Status.APPROVED


def test_chunks_cover_every_row_once() -> None:
    assert chunks(5, 2) == [(1, 2), (3, 4), (5, 5)]
    assert chunks(0, 2) == []


def test_quick_sizes_give_way_to_explicit_ones() -> None:
    args = scale.parse_args(["--quick", "--finished", "3000"])
    assert args.finished == 3000 and args.decisions == scale.QUICK["decisions"]
    assert scale.parse_args([]).finished == 10_000_000
