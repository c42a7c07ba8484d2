"""/metrics carries the standard process_* and python_* collectors beside ours, and every
expression of the documented Grafana dashboard names only metrics a real /metrics exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from taskqueue import ObservabilityServer, TaskQueue

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text("utf-8"))
# A metric name in PromQL: our prefixes and the standard collectors'.
NAME = re.compile(r"\b((?:signoff|process|python)_[a-zA-Z0-9_]+)\b")


def _expressions() -> list[str]:
    return [t["expr"] for panel in DASHBOARD["panels"] for t in panel["targets"]]


async def _scrape(queue: TaskQueue) -> set[str]:
    # Feed every family once so the page has each sample our processes can export:
    # a task waiting, one decided, one parked with an open question.
    await queue.notification_channel_register("outbox")
    await queue.notification_send("hello", "an undelivered notification")
    await queue.task_enqueue("dash", {})
    for decide in (True, False):
        await queue.task_enqueue("dash", {"n": decide})
        task = await queue.task_claim("dash", "w1")
        assert task is not None
        await queue.task_park(task.id, "w1", "ok?", claim=task.claim)
        if decide:
            await queue.approval_decide_for_task(task.id, "approved", "ada")
    server = ObservabilityServer(queue, "127.0.0.1:0")
    server.observe_slice("dash", "done", 0.2)
    await server.start()
    try:
        async with aiohttp.ClientSession() as session, session.get(
                f"http://127.0.0.1:{server.port}/metrics") as response:
            text = await response.text()
    finally:
        await server.stop()
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


async def test_metrics_carry_the_standard_collectors(queue: TaskQueue) -> None:
    names = await _scrape(queue)
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes",
            "python_info", "python_gc_collections_total"} <= names
    assert "signoff_database_up" in names


async def test_every_dashboard_expression_names_exported_metrics(queue: TaskQueue) -> None:
    names = await _scrape(queue)
    exprs = _expressions()
    assert len(exprs) >= 10
    for expr in exprs:
        used = set(NAME.findall(expr))
        assert used, f"no metric in {expr!r}"
        assert used <= names, f"{expr!r} names {sorted(used - names)}, not exported"


def test_the_dashboard_covers_the_main_figures() -> None:
    text = " ".join(_expressions())
    for figure in ("signoff_approvals_open", "signoff_approval_oldest_age_seconds",
                   "signoff_decisions_total", "signoff_handler_duration_seconds_count",
                   'status="failed"', "signoff_notification_backlog",
                   "signoff_decision_seconds_bucket"):
        assert figure in text


def test_decision_latency_shows_p50_and_p90_by_capability() -> None:
    exprs = {t["expr"].replace(" ", "") for panel in DASHBOARD["panels"]
             for t in panel["targets"] if "signoff_decision_seconds" in t["expr"]}
    assert exprs == {f"histogram_quantile({q},sumby(le,capability)"
                     "(rate(signoff_decision_seconds_bucket[1h])))" for q in ("0.5", "0.9")}


def test_no_two_panels_overlap() -> None:
    cells = [(p["title"], x, y) for p in DASHBOARD["panels"]
             for x in range(p["gridPos"]["x"], p["gridPos"]["x"] + p["gridPos"]["w"])
             for y in range(p["gridPos"]["y"], p["gridPos"]["y"] + p["gridPos"]["h"])]
    assert len({(x, y) for _, x, y in cells}) == len(cells)
    assert len({p["id"] for p in DASHBOARD["panels"]}) == len(DASHBOARD["panels"])
