"""The soak's probe: the latency of single task_claim calls, on a capability without caps and
on one with max_running, the same small sample every round."""

from __future__ import annotations

from typing import Any

from bench.measure import enqueue_ids, latency_ms, timed
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
    seconds: list[float] = []
    for _ in range(n):
        task, took = await timed(q.task_claim(capability, WORKER))
        if task is None:
            raise RuntimeError(f"{capability} ran out of tasks after {len(seconds)} claims")
        await q.task_complete(task.id, WORKER, claim=task.claim)
        seconds.append(took)
    return latency_ms(seconds)


async def probe(q: TaskQueue, n: int) -> dict[str, Any]:
    """Claim latency, uncapped and capped."""
    return {"uncapped": await claim_sample(q, UNCAPPED, n),
            "capped": await claim_sample(q, CAPPED, n)}
