"""bench.waits runs end to end at a tiny size; its naming of statements and its busy share
are checked, its figures are not."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from bench.peers import pgqueuer_available
from bench.waits import busy_share, main, statement_label
from tests.conftest import ADMIN_DSN


def test_a_statement_is_named_by_its_first_words_without_the_comment_dashes() -> None:
    assert statement_label("-- name: task_claim\n-- Up to n tasks\nSELECT 1") == (
        "name: task_claim -- Up to n tasks SELECT 1")
    assert statement_label("\n  WITH\n-- No entrypoint\n  x AS (SELECT 1)") == (
        "WITH -- No entrypoint x AS (SELECT 1)")
    assert len(statement_label("SELECT " + "x, " * 100)) == 48
    assert statement_label("") == ""


def test_busy_share_is_what_was_not_idle() -> None:
    # 400 jiffies went by, 100 of them idle: three quarters busy.
    assert busy_share((1000, 300), (1400, 400)) == 0.75
    assert busy_share((1000, 300), (1000, 300)) is None


def test_the_cli_samples_each_drain_and_drops_its_database(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_bench_w_{uuid.uuid4().hex[:10]}"

    assert main(["--dsn", ADMIN_DSN, "--database", name, "--tasks", "300",
                 "--interval", "0.01"]) == 0

    doc = json.loads(capsys.readouterr().out)
    figures = doc["figures"]
    # PgQueuer is measured where it is installed (`make bench`; the suite's venv has not).
    peer = {"pgqueuer_16_managers"} if pgqueuer_available() else set()
    assert set(figures) == {"signoff_worker"} | peer and doc["pgqueuer"] == bool(peer)
    for f in figures.values():
        assert f["exactly_once"] is True
        assert f["samples"] > 0 and 0 <= f["machine_busy_share"] <= 1
        assert sum(r["samples"] for r in f["by_wait"]) <= f["active_samples"]
    assert "| signoff_worker: " in doc["table"]
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None


def test_a_bad_interval_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--interval", "0"])
    assert exit_.value.code == 2
    assert "--interval must be more than 0" in capsys.readouterr().err
