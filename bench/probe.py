"""The soak's probe: the latency of single task_claim calls, on a capability without caps and
on one with max_running, the same small sample every round."""

from __future__ import annotations

from typing import Any

from bench.finished import claim_complete_loop
from bench.measure import enqueue_ids, latency_ms
from taskqueue import TaskQueue

UNCAPPED = "soak.probe"
CAPPED = "soak.probe.capped"
WORKER = "soak-probe"


async def probe_setup(q: TaskQueue, max_running: int) -> None:
    """Cap the capped probe's capability (the counted claim path)."""
    await q.capability_set(CAPPED, max_running=max_running)


async def claim_sample(q: TaskQueue, capability: str, n: int) -> dict[str, Any]:
    """Enqueue `n` tasks, then claim (timed) and complete them one at a time."""
    await enqueue_ids(q, capability, n, n)
    claims, _ = await claim_complete_loop(q, n, capability, WORKER)
    return latency_ms(claims)


async def probe(q: TaskQueue, n: int) -> dict[str, Any]:
    """Claim latency, uncapped and capped."""
    return {"uncapped": await claim_sample(q, UNCAPPED, n),
            "capped": await claim_sample(q, CAPPED, n)}
