"""The benchmark runs end to end at tiny sizes and reports every figure; timings are not checked."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest

from bench.benchmark import Config, figures_run, main
from bench.drain import drain
from bench.measure import enqueue_ids
from taskqueue import TaskQueue
from tests.conftest import ADMIN_DSN

# No CHECKPOINT: it is server-wide, so its time depends on everything else running.
TINY = Config(tasks=6, batch=4, finished_rows=1000, latency_tasks=5, claimers=(1, 4, 16), repeat=1,
              checkpoint=False)
LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}


def _assert_every_figure(doc: dict[str, Any]) -> None:
    assert {"enqueue_single", "enqueue_batched", "drain", "claim_with_finished_rows",
            "machine", "parameters", "exactly_once"} <= set(doc)
    assert {"tasks_per_s", "call"} <= set(doc["enqueue_single"])
    assert set(doc["enqueue_single"]["call"]) == LATENCY
    assert "tasks_per_s" in doc["enqueue_batched"]
    assert {"cores", "postgres"} <= set(doc["machine"])
    assert doc["compare"]["exactly_once"] is True
    assert "worker_16.signoff" in doc["compare"]["median_tasks_per_s"]
    assert "| `signoff worker --concurrency 16`, no-op |" in doc["table"]


async def test_benchmark_reports_every_figure_and_exactly_once(dsn: str) -> None:
    doc = await figures_run(dsn, TINY)

    _assert_every_figure(doc)
    assert [d["claimers"] for d in doc["drain"]] == [1, 4, 16]
    for figure in doc["drain"]:
        assert figure["exactly_once"] is True
        assert figure["completed_ids"] == TINY.tasks and figure["lease_lost"] == []
        assert set(figure["claim"]) == LATENCY and "tasks_per_s" in figure
    assert doc["exactly_once"] is True
    latency = doc["claim_with_finished_rows"]
    assert latency["finished_rows"] == 1000
    for path in ("uncapped", "capped"):
        assert {"claim", "claim_complete", "bare_claim", "empty_claim", "explain",
                "p99_vs_bare"} <= set(latency[path])
        assert latency[path]["claim"]["n"] == TINY.latency_tasks
        assert latency[path]["bare_claim"]["n"] == TINY.latency_tasks
        assert isinstance(latency[path]["explain"]["uses_claimable_index"], bool)
        assert latency[path]["explain"]["statements"] >= 1
    assert latency["capped"]["max_running"] == TINY.max_running
    json.dumps(doc)


def test_benchmark_cli_prints_json_and_drops_its_database(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_bench_t_{uuid.uuid4().hex[:10]}"
    argv = ["--dsn", ADMIN_DSN, "--database", name, "--tasks", "3", "--batch", "2",
            "--finished-rows", "1000", "--latency-tasks", "3", "--claimers", "1,2",
            "--no-checkpoint"]

    assert main(argv) == 0

    doc = json.loads(capsys.readouterr().out)
    _assert_every_figure(doc)
    assert doc["database"] == name and doc["exactly_once"] is True
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None


async def test_drain_with_claimer_processes_completes_each_task_once(dsn: str) -> None:
    async with TaskQueue.connect(dsn) as q:
        expected = await enqueue_ids(q, "bench.p", 5, 5)

    figure = await drain(dsn, "bench.p", expected, 2, processes=True)

    assert figure["mode"] == "processes" and figure["exactly_once"] is True
    assert sum(figure["per_claimer_tasks"]) == 5
