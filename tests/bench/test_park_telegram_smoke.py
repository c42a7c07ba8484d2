"""bench.park_telegram runs end to end (a real worker under a small load, a real service
sending to the fake Bot API) with a few parks; timings are reported, never checked."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from bench import park_telegram
from bench.park_telegram import approval_of, main
from tests.conftest import ADMIN_DSN

pytestmark = pytest.mark.slow

LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}


def test_each_park_brings_one_message_timed_and_the_token_is_never_printed(
        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    tokens: list[str] = []
    real = park_telegram.bot_token

    def noted() -> str:
        tokens.append(real())
        return tokens[-1]

    monkeypatch.setattr(park_telegram, "bot_token", noted)
    name = f"signoff_bench_telegram_{uuid.uuid4().hex[:10]}"

    assert main(["--dsn", ADMIN_DSN, "--database", name, "--parks", "3", "--bulk-ms", "20",
                 "--concurrency", "2", "--steady", "0.2"]) == 0

    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["parks"] == 3 and doc["warmup"] == 1 and isinstance(doc["met"], bool)
    figure = doc["park_to_request"]
    assert set(figure) == LATENCY | {"min_ms"} and figure["n"] == 3
    assert 0 < figure["min_ms"] <= figure["p50_ms"] <= figure["max_ms"]
    assert set(doc["park_transaction_to_request"]) == LATENCY
    assert "time.time()" in doc["clock"] and "≤ 50 ms" in doc["goal"]
    # The shape only: how many bulk tasks finish within a few timed samples depends on the
    # machine's load (none did once, in a CI run beside two busy loops).
    assert set(doc["bulk"]) == {"tasks", "seconds", "tasks_per_s"}
    assert doc["bulk"]["tasks"] >= 0 and doc["bulk"]["seconds"] > 0
    assert doc["worker"]["concurrency"] == 2
    once = doc["exactly_once"]
    assert once["ok"] and once["parks"] == once["approvals"] == once["messages"] == 4
    assert once["outbox_delivered"] == 4 and once["approvals_with_more_than_one"] == 0
    [token] = tokens
    assert token not in out + err + caplog.text
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None


def test_a_message_names_the_approval_of_its_first_button() -> None:
    keyboard = {"inline_keyboard": [[{"text": "Approve", "callback_data": "so1:42:a:abcdef"}]]}

    assert approval_of({"reply_markup": keyboard}) == 42
    assert approval_of({"reply_markup": json.dumps(keyboard)}) == 42
    assert approval_of({"text": "an alert"}) is None
    assert approval_of({"reply_markup": {"inline_keyboard": [[{"callback_data": "x"}]]}}) is None
