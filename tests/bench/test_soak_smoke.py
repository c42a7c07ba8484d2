"""The soak runs end to end in quick mode and reports its rounds, ratios and exactly once;
timings are not checked."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from bench.soak import main
from bench.tables import MEASURED
from tests.conftest import ADMIN_DSN

ROUND = {"round", "done", "drain_tasks_per_s", "parked", "messages", "exactly_once",
         "completed", "db", "lease_lost", "pruned", "prune_ms", "vacuum_s", "bytes",
         "tasks_rows", "notifications_rows", "claim"}
LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}


def test_soak_quick_prunes_reports_every_round_and_drops_its_database(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_soak_t_{uuid.uuid4().hex[:10]}"
    # Retention 0 and a VACUUM every round: pruning and the steady state do not wait on
    # the clock, whatever the machine's speed.
    argv = ["--dsn", ADMIN_DSN, "--database", name, "--quick", "--tasks", "1200",
            "--batch", "400", "--retention", "0", "--vacuum-every", "0", "--probe", "5"]

    assert main(argv) == 0

    doc = json.loads(capsys.readouterr().out)
    assert (doc["exactly_once"], doc["tasks"], doc["completed"]) == (True, 1200, 1200)
    assert doc["machine"]["autovacuum"] in {"on", "off"} and "autovacuum" in doc["note"]
    assert [r["round"] for r in doc["rounds"]] == [1, 2, 3]
    for r in doc["rounds"]:
        assert set(r) == ROUND and r["exactly_once"] is True and r["lease_lost"] == []
        assert set(r["bytes"]) == {*MEASURED, "total"} and r["vacuum_s"] is not None
        assert set(r["claim"]["uncapped"]) == set(r["claim"]["capped"]) == LATENCY
        assert r["claim"]["capped"]["n"] == 5
    assert doc["pruned"] > 0 and doc["vacuums"] == 3 and doc["steady_from_round"] == 1
    assert {"size_total", "tasks_rows", "claim_p99_uncapped", "claim_p99_capped"} <= set(
        doc["ratios"])
    assert {"total_mb_per_100k_tasks_steady", "total_mb_per_100k_tasks_unpruned",
            "size_total_peak_second_half_over_first"} <= set(doc["trend"])
    assert doc["milestones"][-1]["done"] == 1200
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None
