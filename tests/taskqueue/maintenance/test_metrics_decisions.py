"""/metrics' decision figures, scraped from a real endpoint and read with prometheus_client's
own text parser: signoff_decision_seconds and signoff_approvals_expired_total."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from taskqueue import ObservabilityServer, TaskQueue
from tests.taskqueue.decision_history import seed_history

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
async def server(queue: TaskQueue) -> AsyncIterator[ObservabilityServer]:
    running = ObservabilityServer(queue, "127.0.0.1:0", timeout=10)
    await running.start()
    yield running
    await running.stop()


async def scrape(server: ObservabilityServer) -> tuple[Samples, dict[str, str]]:
    url = f"http://127.0.0.1:{server.port}/metrics"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200
        text = await response.text()
    families = list(text_string_to_metric_families(text))
    return ({(s.name, frozenset(s.labels.items())): s.value for f in families
             for s in f.samples}, {f.name: f.type for f in families})


def get(found: Samples, name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


async def test_decision_times_are_a_histogram_by_capability_and_decision(
        queue: TaskQueue, server: ObservabilityServer) -> None:
    await seed_history(queue)
    found, types = await scrape(server)
    assert types["signoff_decision_seconds"] == "histogram"
    assert types["signoff_approvals_expired"] == "counter"
    # deploy approved: 60, 120, 300 (alice) and 9999 (carol, 40 days ago: still held).
    approved = {"capability": "deploy", "decision": "approved"}
    bucket = "signoff_decision_seconds_bucket"
    assert get(found, bucket, **approved, le="60.0") == 1
    assert get(found, bucket, **approved, le="300.0") == 3
    assert get(found, bucket, **approved, le="7200.0") == 3
    assert get(found, bucket, **approved, le="14400.0") == 4
    assert get(found, bucket, **approved, le="+Inf") == 4
    assert get(found, "signoff_decision_seconds_count", **approved) == 4
    assert get(found, "signoff_decision_seconds_sum", **approved) == 60 + 120 + 300 + 9999
    skipped = {"capability": "deploy", "decision": "skipped"}
    assert get(found, bucket, **skipped, le="60.0") == 1
    assert get(found, "signoff_decision_seconds_sum", **skipped) == 30
    # An expiry is nobody's decision: no series; no person's name in any label.
    assert not [k for k in found if k[0].startswith("signoff_decision_seconds")
                and ("decision", "expired") in k[1]]
    assert not [k for k in found if any(v in {"alice", "bob", "carol"} for _, v in k[1])]
    assert get(found, "signoff_approvals_expired_total", capability="deploy") == 2
    assert get(found, "signoff_approvals_expired_total", capability="mail") == 1


async def test_a_new_decision_shows_at_the_next_scrape(
        queue: TaskQueue, server: ObservabilityServer) -> None:
    before, types = await scrape(server)
    assert types["signoff_decision_seconds"] == "histogram"
    assert not [k for k in before if k[0].startswith("signoff_decision_seconds")]
    assert not [k for k in before if k[0] == "signoff_approvals_expired_total"]
    await seed_history(queue, [("mail", "revised", "dana", 45, 0)])
    after, _ = await scrape(server)
    revised = {"capability": "mail", "decision": "revised"}
    assert get(after, "signoff_decision_seconds_bucket", **revised, le="60.0") == 1
    assert get(after, "signoff_decision_seconds_count", **revised) == 1
