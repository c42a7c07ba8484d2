"""bench.service_rss starts real services (the example config's and the one with no config),
reads their memory once they idle and prints one JSON document; the figures are reported,
never checked."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from bench.service_rss import HEAVY, main
from tests.conftest import ADMIN_DSN

pytestmark = pytest.mark.slow

FIGURES = {"rss_mb", "hwm_mb", "rss_anon_mb", "rss_file_mb"}


def test_the_cli_prints_each_case_as_json_and_drops_its_database(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_bench_m_{uuid.uuid4().hex[:10]}"

    assert main(["--dsn", ADMIN_DSN, "--database", name, "--idle", "0.5"]) == 0

    doc = json.loads(capsys.readouterr().out)
    assert doc["idle_seconds"] == 0.5 and doc["runs"] == 1 and isinstance(doc["met"], bool)
    assert {"cores", "load_average", "load_average_end"} <= set(doc["machine"])
    assert [case["config"] for case in doc["cases"]] == ["signoff.example.toml", "none"]
    for case in doc["cases"]:
        assert FIGURES | {"heavy_imported", "mapped_packages", "runs"} <= set(case)
        assert all(isinstance(case[key], float) and case[key] > 0 for key in FIGURES)
        assert set(case["heavy_imported"]) <= set(HEAVY)
        [run] = case["runs"]
        assert run["modules"] > 0 and run["started_s"] > 0
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None
