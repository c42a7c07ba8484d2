"""Figure 3: drain a capability with concurrent claimers and check each task ran exactly once."""

from __future__ import annotations

import asyncio
import multiprocessing
import queue
import time
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any, TypedDict

from bench.measure import execute, latency_ms, rate, timed
from taskqueue import Completion, LeaseLost, Status, Task, TaskNotFound, TaskQueue


class Drained(TypedDict):
    """What one claimer did; plain data so that it crosses a process boundary."""

    ids: list[int]
    claim_s: list[float]
    lost: list[str]
    started: float
    ended: float


async def claimer_run(q: TaskQueue, capability: str, worker: str, batch: int = 1) -> Drained:
    """Claim and complete until nothing is left to claim: one task a call (task_claim,
    task_complete), or up to `batch` (task_claim_many, task_settle_many, as PgQueuer's
    batch-10 drain does; each completion is still fenced on its own claim token)."""
    done: Drained = {"ids": [], "claim_s": [], "lost": [], "started": time.time(), "ended": 0}
    while True:
        tasks, seconds = await timed(_claim(q, capability, worker, batch))
        if not tasks:
            break
        done["claim_s"].append(seconds)
        for task, result in zip(tasks, await _complete(q, worker, tasks, batch),
                                strict=True):
            if isinstance(result, LeaseLost | TaskNotFound):
                done["lost"].append(str(result))
            else:
                done["ids"].append(task.id)
    done["ended"] = time.time()
    return done


async def _claim(q: TaskQueue, capability: str, worker: str, batch: int) -> list[Task]:
    if batch > 1:
        return await q.task_claim_many(capability, worker, batch)
    task = await q.task_claim(capability, worker)
    return [] if task is None else [task]


async def _complete(q: TaskQueue, worker: str, tasks: list[Task],
                    batch: int) -> Sequence[Task | Status | LeaseLost | TaskNotFound]:
    """Each task's completion, or its lost lease: task_settle_many (what a worker's batched
    outcomes use: each task's new status, not its row) when batching, else task_complete of
    the one task."""
    if batch > 1:
        return await q.task_settle_many([Completion(t.id, worker, t.claim) for t in tasks])
    [task] = tasks
    try:
        return [await q.task_complete(task.id, worker, claim=task.claim)]
    except LeaseLost as exc:
        return [exc]


async def drain_asyncio(dsn: str, capability: str, claimers: int,
                        batch: int = 1) -> list[Drained]:
    """Claimers as asyncio tasks sharing one pool with a connection for each."""
    async with TaskQueue.connect(dsn, min_size=claimers, max_size=claimers) as q:
        runs = (claimer_run(q, capability, f"bench-w{i}", batch) for i in range(claimers))
        return list(await asyncio.gather(*runs))


async def _claimer_alone(dsn: str, capability: str, worker: str, barrier: Barrier,
                         batch: int) -> Drained:
    async with TaskQueue.connect(dsn, min_size=1, max_size=1) as q:
        barrier.wait(timeout=60)  # every process has connected: start together
        return await claimer_run(q, capability, worker, batch)


def claimer_process(dsn: str, capability: str, worker: str, barrier: Barrier,
                    out: Queue[Drained], batch: int = 1) -> None:
    """A claimer in a process of its own (the child side of --processes)."""
    out.put(asyncio.run(_claimer_alone(dsn, capability, worker, barrier, batch)))


async def drain_processes(dsn: str, capability: str, claimers: int,
                          batch: int = 1) -> list[Drained]:
    """Claimers as separate processes, so the client side is not one event loop."""
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(claimers), ctx.Queue()
    procs = [ctx.Process(target=claimer_process, daemon=True,
                         args=(dsn, capability, f"bench-p{i}", barrier, out, batch))
             for i in range(claimers)]
    for proc in procs:
        proc.start()
    found = await _collect(out, procs)
    for proc in procs:
        proc.join()
    return found


async def _collect(out: Queue[Drained], procs: Sequence[BaseProcess]) -> list[Drained]:
    """Each process's report; an error once every process has ended and one is missing."""
    found: list[Drained] = []
    while len(found) < len(procs):
        try:
            found.append(await asyncio.to_thread(out.get, timeout=1))
        except queue.Empty:
            if not any(p.is_alive() for p in procs) and out.empty():
                raise RuntimeError("a claimer process ended without a report") from None
    return found


_COUNTS = """
SELECT (SELECT count(*) FROM tasks WHERE capability = %(c)s) AS tasks,
       (SELECT count(*) FROM tasks WHERE capability = %(c)s AND status = 'succeeded') AS succeeded,
       count(*) FILTER (WHERE e.kind = 'claimed') AS claim_events,
       count(DISTINCT e.task_id) FILTER (WHERE e.kind = 'claimed') AS claimed_tasks,
       count(*) FILTER (WHERE e.kind = 'completed') AS complete_events
FROM task_events e JOIN tasks t ON t.id = e.task_id
WHERE t.capability = %(c)s"""


async def drain_check(dsn: str, capability: str, expected: list[int],
                      runs: list[Drained]) -> dict[str, Any]:
    """Exactly once: the claimers' ids are the enqueued ids without repeats, and the
    database agrees (every task succeeded, with one claim event and one completion)."""
    ids = [i for r in runs for i in r["ids"]]
    counts = await execute(dsn, _COUNTS, {"c": capability})
    once = (len(ids) == len(set(ids)) and set(ids) == set(expected)
            and all(v == len(expected) for v in counts.values()))
    return {"exactly_once": once, "completed_ids": len(ids), "distinct_ids": len(set(ids)),
            "db": counts, "lease_lost": [m for r in runs for m in r["lost"]]}


async def drain(dsn: str, capability: str, expected: list[int], claimers: int, *,
                processes: bool = False, batch: int = 1) -> dict[str, Any]:
    """Drain the pending tasks `expected` of `capability` with `claimers` workers at once,
    each taking up to `batch` tasks a claim."""
    run = drain_processes if processes else drain_asyncio
    runs = await run(dsn, capability, claimers, batch)
    seconds = max(r["ended"] for r in runs) - min(r["started"] for r in runs)
    check = await drain_check(dsn, capability, expected, runs)
    return {"claimers": claimers, "mode": "processes" if processes else "asyncio",
            "batch": batch, "tasks": len(expected), "seconds": round(seconds, 3),
            "tasks_per_s": rate(check["completed_ids"], seconds),
            "claim": latency_ms([s for r in runs for s in r["claim_s"]]),
            "per_claimer_tasks": [len(r["ids"]) for r in runs], **check}
