"""The soak runs end to end in quick mode and reports its rounds, ratios and exactly once;
with --autovacuum it turns the server's autovacuum on and puts it back however the run
ends. Timings are not checked."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.autovacuum import AutovacuumBusy, autovacuum_on
from bench.soak import main
from bench.tables import MEASURED, VACUUMED
from tests.conftest import ADMIN_DSN

ROUND = {"round", "done", "drain_tasks_per_s", "parked", "messages", "exactly_once",
         "completed", "db", "lease_lost", "pruned", "prune_ms", "prune_vacuum_ms", "vacuum_s",
         "bytes",
         "tasks_rows", "notifications_rows", "autovacuum", "claim"}
LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}
ROOT = Path(__file__).resolve().parents[2]
COUNTERS = {"autovacuum_count", "vacuum_count", "n_dead_tup", "n_live_tup", "last_autovacuum"}


def _server_autovacuum(name: str = "autovacuum") -> dict[str, Any]:
    """A server setting, where it comes from and whether ALTER SYSTEM set it."""
    with psycopg.connect(ADMIN_DSN) as conn:
        row = conn.execute("SELECT setting, source, sourcefile FROM pg_settings "
                           "WHERE name = %s", (name,)).fetchone()
        altered = conn.execute("SELECT count(*) FROM pg_file_settings WHERE name = %s "
                               "AND sourcefile LIKE '%%/postgresql.auto.conf'",
                               (name,)).fetchone()
    assert row is not None and altered is not None
    return {"setting": row[0], "source": row[1], "sourcefile": row[2], "altered": altered[0]}


def _database_exists(name: str) -> bool:
    with psycopg.connect(ADMIN_DSN) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone() is not None


def test_soak_quick_prunes_reports_every_round_and_drops_its_database(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_soak_t_{uuid.uuid4().hex[:10]}"
    # Retention 0 and a VACUUM every round (a round takes longer than a millisecond):
    # pruning and the steady state do not wait on the clock, whatever the machine's speed.
    argv = ["--dsn", ADMIN_DSN, "--database", name, "--quick", "--tasks", "1200",
            "--batch", "400", "--retention", "0", "--vacuum-every", "0.001", "--probe", "5"]

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
        assert set(r["autovacuum"]) == set(VACUUMED)
        assert all(set(c) == COUNTERS for c in r["autovacuum"].values())
    assert doc["pruned"] > 0 and doc["vacuums"] == 3 and doc["steady_from_round"] == 1
    assert doc["pruner_vacuums"] == 0  # 400 tasks a round, below PrunerConfig's vacuum_after
    assert {"size_total", "tasks_rows", "claim_p99_uncapped", "claim_p99_capped"} <= set(
        doc["ratios"])
    assert {"total_mb_per_100k_tasks_steady", "total_mb_per_100k_tasks_unpruned",
            "size_total_peak_second_half_over_first"} <= set(doc["trend"])
    assert doc["milestones"][-1]["done"] == 1200
    assert not _database_exists(name)


def test_soak_quick_counts_the_pruner_s_vacuum_as_the_steady_state_s(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_soak_t_{uuid.uuid4().hex[:10]}"
    argv = ["--dsn", ADMIN_DSN, "--database", name, "--quick", "--tasks", "1200",
            "--batch", "400", "--retention", "0", "--vacuum-every", "0",
            "--prune-vacuum-after", "1", "--probe", "5"]

    assert main(argv) == 0

    doc = json.loads(capsys.readouterr().out)
    assert doc["exactly_once"] is True and doc["vacuums"] == 0
    assert doc["parameters"]["prune_vacuum_after"] == 1
    assert "never runs VACUUM itself" in doc["note"]
    assert "the pruner runs VACUUM (ANALYZE)" in doc["note"]
    pruned = [r for r in doc["rounds"] if r["pruned"] > 0]
    assert pruned and all(r["prune_vacuum_ms"] is not None for r in pruned)
    assert doc["pruner_vacuums"] == len(pruned)
    assert doc["steady_from_round"] == pruned[0]["round"]
    assert all(r["autovacuum"]["tasks"]["vacuum_count"] >= 1 for r in pruned)
    assert not _database_exists(name)


def test_soak_quick_with_autovacuum_runs_with_it_on_and_puts_the_server_setting_back(
        capsys: pytest.CaptureFixture[str]) -> None:
    before, naptime = _server_autovacuum(), _server_autovacuum("autovacuum_naptime")
    name = f"signoff_soak_t_{uuid.uuid4().hex[:10]}"
    argv = ["--dsn", ADMIN_DSN, "--database", name, "--quick", "--tasks", "1000",
            "--batch", "500", "--retention", "0", "--autovacuum", "--vacuum-every", "0",
            "--autovacuum-naptime", "7", "--probe", "5"]

    try:
        assert main(argv) == 0
    except AutovacuumBusy:
        pytest.skip("another soak holds the server's autovacuum setting")

    doc = json.loads(capsys.readouterr().out)
    server = doc["machine"]["autovacuum_server"]
    assert doc["machine"]["autovacuum"] == "on" and doc["exactly_once"] is True
    assert server["before"]["setting"] == before["setting"]
    assert server["changed"] == (before["setting"] != "on")
    assert _server_autovacuum() == before
    assert _server_autovacuum("autovacuum_naptime") == naptime
    assert server["set"].get("autovacuum_naptime") == (None if naptime["setting"] == "7"
                                                       else "7")
    if server["changed"]:
        assert server["restored"]["setting"] == before["setting"]
        assert "puts it back" in doc["note"] and before["source"] in doc["note"]
    assert "never runs VACUUM itself" in doc["note"] and "autovacuum_naptime" in server["settings"]
    assert doc["vacuums"] == 0 and all(r["vacuum_s"] is None for r in doc["rounds"])
    assert set(doc["autovacuums"]["counts"]) == set(VACUUMED)
    assert all(set(r["autovacuum"]) == set(VACUUMED) for r in doc["rounds"])
    assert not _database_exists(name)


async def test_autovacuum_is_put_back_when_the_run_fails() -> None:
    before = _server_autovacuum()
    with pytest.raises(RuntimeError, match="the run failed"):
        try:
            async with autovacuum_on(ADMIN_DSN):
                assert _server_autovacuum()["setting"] == "on"
                raise RuntimeError("the run failed")
        except AutovacuumBusy:
            pytest.skip("another soak holds the server's autovacuum setting")
    assert _server_autovacuum() == before


@pytest.mark.slow
@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["ctrl-c", "sigterm"])
def test_autovacuum_is_put_back_when_the_soak_is_stopped(stop: signal.Signals,
                                                         code: int) -> None:
    before = _server_autovacuum()
    name = f"signoff_soak_t_{uuid.uuid4().hex[:10]}"
    soak = subprocess.Popen(
        [sys.executable, "-m", "bench.soak", "--dsn", ADMIN_DSN, "--database", name,
         "--quick", "--tasks", "1000000", "--batch", "500", "--autovacuum",
         "--vacuum-every", "0", "--probe", "5"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        # A shell's background job starts with SIGINT ignored; Ctrl-C is what is tested.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert soak.stderr is not None
    seen = []
    for line in soak.stderr:  # until the first round is done: autovacuum is on by then
        seen.append(line)
        if " round 1 " in line:
            break
    soak.send_signal(stop)
    seen.append(soak.communicate(timeout=120)[1])
    if "another soak holds" in "".join(seen).lower():
        pytest.skip("another soak holds the server's autovacuum setting")

    assert soak.returncode == code and "autovacuum put back: " in "".join(seen)
    assert _server_autovacuum() == before
    assert not _database_exists(name)


def test_the_soak_vacuums_every_table_the_pruner_does() -> None:
    """The soak's own VACUUM stands in for autovacuum: it covers the same tables as the
    pruner's (every table a prune's deletes reach)."""
    from taskqueue.store.services import PRUNED_TABLES

    assert set(VACUUMED) == set(PRUNED_TABLES)
