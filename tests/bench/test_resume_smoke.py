"""bench.resume runs end to end with a real worker process and a few approvals; timings are
reported, never checked."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from bench.benchmark import config_from, parse_args
from bench.compare import resume_row
from bench.resume import approve_resume, approve_resume_under_load, main
from taskqueue import Decision, Status, TaskQueue
from tests.conftest import ADMIN_DSN

LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}


async def test_each_approval_is_timed_to_the_handlers_resume(dsn: str) -> None:
    figure = await approve_resume(dsn, 5, poll_interval=30)

    assert figure["approvals"] == 5 and isinstance(figure["met"], bool)
    resume = figure["approve_to_resume"]
    assert set(resume) == LATENCY | {"min_ms"} and resume["n"] == 5
    assert 0 < resume["min_ms"] <= resume["p50_ms"] <= resume["max_ms"]
    assert set(figure["approve_call"]) == set(figure["after_commit"]) == LATENCY
    assert "time.time()" in figure["clock"]
    async with TaskQueue.connect(dsn) as q:
        done = await q.task_list(status=Status.SUCCEEDED)
    assert len(done) == 5
    assert all(t.decision is Decision.APPROVED and "resumed_at" in (t.result or {})
               for t in done)
    assert "approve → resume p99" in resume_row(figure)
    json.dumps(figure)


async def test_under_load_the_bulk_rate_and_the_databases_clock_are_reported(
        dsn: str) -> None:
    figure = await approve_resume_under_load(dsn, 3, poll_interval=30, bulk_ms=5,
                                             concurrency=4)

    assert figure["approvals"] == 3 and isinstance(figure["met"], bool)
    assert figure["approve_to_resume"]["n"] == figure["after_commit"]["n"] == 3
    assert figure["decided_to_claimed"]["n"] == 3 and set(figure["decided_to_claimed"]) == LATENCY
    # The shape only: how many bulk tasks finish within a few timed samples depends on the
    # machine's load (none did once, in a CI run beside two busy loops).
    assert set(figure["bulk"]) == {"tasks", "seconds", "tasks_per_s"}
    assert figure["bulk"]["tasks"] >= 0 and figure["bulk"]["seconds"] > 0
    assert figure["worker"]["concurrency"] == 4 and "1000 bulk tasks/s" in figure["goal"]
    async with TaskQueue.connect(dsn) as q:
        answered = [t for t in await q.task_list(status=Status.SUCCEEDED, limit=100000)
                    if "resumed_at" in (t.result or {})]
    assert len(answered) == 3
    json.dumps(figure)


def test_the_cli_prints_json_and_drops_its_database(capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_bench_r_{uuid.uuid4().hex[:10]}"

    assert main(["--dsn", ADMIN_DSN, "--database", name, "--approvals", "2"]) == 0

    doc = json.loads(capsys.readouterr().out)
    assert doc["approvals"] == 2 and doc["approve_to_resume"]["n"] == 2
    assert {"cores", "postgres"} <= set(doc["machine"])
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None


def test_the_main_benchmark_skips_approve_to_resume_unless_asked() -> None:
    assert config_from(parse_args(["--quick"])).resume_approvals == 0
    assert config_from(parse_args(["--quick", "--resume-approvals", "7"])).resume_approvals == 7
