"""bench.ask_wait runs end to end at tiny sizes (a small load, two decisions a figure) and
keeps its secrets; an asker that answers with another decision fails the exactly-once
check. Timings are reported, never checked."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest

from bench import ask_wait
from taskqueue import MASK, Decision, TaskQueue
from tests.conftest import ADMIN_DSN

LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}
PASSWORD = "hunter2-askwait-" + uuid.uuid4().hex[:8]
# Trust authentication on the test server: the password is sent and ignored.
SECRET_DSN = ADMIN_DSN.replace("postgres@", f"postgres:{PASSWORD}@", 1)


def test_both_figures_under_load_print_json_without_secrets(
        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    tokens: list[str] = []
    make = ask_wait.token_make

    async def kept(dsn: str) -> str:
        tokens.append(await make(dsn))
        return tokens[-1]

    monkeypatch.setattr(ask_wait, "token_make", kept)
    name = f"signoff_bench_askwait_{uuid.uuid4().hex[:10]}"

    assert ask_wait.main(["--dsn", SECRET_DSN, "--database", name, "--decisions", "2",
                          "--concurrency", "4", "--backlog", "500", "--warm-up", "0.5",
                          "--settle", "0.3"]) == 0

    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["exactly_once"] is True and doc["problems"] == []
    assert doc["decisions"] == 2 and isinstance(doc["met"], bool)
    for figure, answer in (("cli", "to_first_line"), ("api", "to_response")):
        found = doc[figure]
        assert set(found[answer]) == LATENCY and found[answer]["n"] == 2
        assert found["decide_call"]["n"] == found["after_commit"]["n"] == 2
        # The shape only: the bulk tasks finished within two samples depend on the load.
        assert set(found["bulk"]) == {"tasks", "seconds", "tasks_per_s"}
        assert found["bulk"]["tasks"] >= 0 and isinstance(found["met"], bool)
        assert "20 ms" in found["goal"] and "1000 bulk tasks/s" in found["goal"]
    assert doc["cli"]["to_exit"]["n"] == 2 and "to_first_line" in doc["cli"]["goal_figure"]
    [token] = tokens
    assert token and token not in out + err + caplog.text
    assert PASSWORD not in out + err + caplog.text
    assert f"postgres:{MASK}@" in doc["command"]
    with psycopg.connect(ADMIN_DSN) as conn:
        found_db = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                (name,)).fetchone()
    assert found_db is None


async def test_an_answer_with_another_decision_is_a_problem(
        dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def skip_all(q: TaskQueue, approval_id: int, i: int) -> tuple[float, float]:
        await q.approval_decide(approval_id, Decision.SKIPPED, ask_wait.DECIDER)
        return 0.0, 0.0

    monkeypatch.setattr(ask_wait, "decide", skip_all)
    token = await ask_wait.token_make(dsn)
    problems: list[str] = []
    async with TaskQueue.connect(dsn) as q:
        cli: dict[str, Any] = await ask_wait.cli_figure(q, dsn, 1, lambda: 0.05, problems)
        api = await ask_wait.api_figure(q, dsn, token, 1, lambda: 0.05, problems)
        problems += await ask_wait.decided_once(q, "api", 1)

    # Rounds -1 (the untimed one, revise) and 0 (approve) of each figure were skipped.
    assert cli["to_first_line"]["n"] == api["to_response"]["n"] == 0
    assert sum("expected 'revised: " in p or "expected 'approved by" in p
               for p in problems) == 2
    assert sum("expected revised by" in p or "expected approved by" in p
               for p in problems) == 2
    assert sum("decided events, decision skipped" in p for p in problems) == 2
