"""bench.cpu_split runs end to end at tiny sizes; its arithmetic and its reading of the
server's CPU are checked, its figures are not."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import psycopg
import pytest

from bench.cpu_split import ClusterCpu, main, marginal, postmaster_children, postmaster_pid, ratios
from tests.conftest import ADMIN_DSN


def test_per_task_is_the_difference_over_the_difference_in_tasks() -> None:
    small = {"tasks": 10, "wall_s": 1.5, "client_cpu_s": 0.7, "server_cpu_s": None,
             "exactly_once": True}
    big = {"tasks": 40, "wall_s": 3.0, "client_cpu_s": 1.0, "server_cpu_s": None,
           "exactly_once": True}

    found = marginal(small, big)

    # 1.5 s more for 30 tasks more: 50 ms a task, and 1 s paid once.
    assert found["wall_us"] == 50_000.0 and found["wall_fixed_ms"] == 1000.0
    assert found["client_cpu_us"] == 10_000.0 and found["client_cpu_fixed_ms"] == 600.0
    assert found["server_cpu_us"] is None and found["server_cpu_fixed_ms"] is None
    assert found["exactly_once"] is True
    assert marginal(small, big | {"exactly_once": False})["exactly_once"] is False


def test_ratios_are_signoff_over_its_peer_and_skip_a_peer_that_did_not_run() -> None:
    figures = {
        "one_a_call.signoff": {"wall_us": 300.0, "client_cpu_us": 100.0, "server_cpu_us": None},
        "one_a_call.reference": {"wall_us": 100.0, "client_cpu_us": 50.0, "server_cpu_us": 10.0},
        "batch.signoff": {"wall_us": 1.0, "client_cpu_us": 1.0, "server_cpu_us": 1.0},
    }

    assert ratios(figures) == {"one_a_call.signoff_over_reference": {
        "wall_us": 3.0, "client_cpu_us": 2.0, "server_cpu_us": None}}


async def test_a_server_process_that_exits_is_counted_once(dsn: str) -> None:
    postmaster = await postmaster_pid(dsn)
    assert postmaster is not None, "the test database runs on this machine"
    cluster = ClusterCpu(postmaster)
    before = await cluster.seconds(timeout=0)
    # A server process of its own, busy on the CPU, that exits before the last reading.
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        pid = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone() or [0])[0]
        await conn.execute("SELECT count(*) FROM generate_series(1, 6000000)")
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        alive = await cluster.seconds(timeout=0)  # it still runs: counted as a child
    after = await cluster.seconds()
    assert pid not in postmaster_children(postmaster)

    # Counted: the last reading holds at least what the process had used (other server
    # processes, such as this suite's database clones, can only add to it).
    assert own > 0.2 and after - before >= own - 0.02, (own, after - before)
    # Once: its exit moved its CPU from its own figures into the postmaster's cutime; had
    # it been counted in both, the last step would have grown by all of it again.
    assert after - alive < own / 2, (own, after - alive)


def test_the_cli_prints_every_figure_and_drops_its_database(
        capsys: pytest.CaptureFixture[str]) -> None:
    name = f"signoff_bench_c_{uuid.uuid4().hex[:10]}"

    assert main(["--dsn", ADMIN_DSN, "--database", name, "--tasks", "8", "--repeat", "1"]) == 0

    doc = json.loads(capsys.readouterr().out)
    figures = doc["figures"]
    assert {"one_a_call.signoff", "one_a_call.reference", "batch.signoff",
            "worker.signoff"} <= set(figures)
    assert all(f["exactly_once"] for f in figures.values())
    assert {"wall_us", "client_cpu_us", "server_cpu_us", "wall_fixed_ms"} <= set(
        figures["worker.signoff"])
    assert doc["server_cpu"] == "the cluster's, from /proc"
    assert "| one_a_call.signoff |" in doc["table"]
    assert "one_a_call.signoff_over_reference" in doc["ratios"]
    assert [r["one_a_call.signoff"]["exactly_once"] for r in doc["repetitions"]] == [True]
    with psycopg.connect(ADMIN_DSN) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert found is None
