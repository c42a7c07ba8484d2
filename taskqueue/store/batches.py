"""Worker outcomes for many tasks at once: complete, release and fail, each task fenced alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from taskqueue.errors import BadInput, LeaseLost, TaskNotFound
from taskqueue.store import rows
from taskqueue.store.base import TASKS_CHANNEL, Conn, QueueBase
from taskqueue.store.checks import check_claim, check_delay
from taskqueue.store.models import JSON, Task
from taskqueue.store.queries import query


@dataclass(frozen=True)
class Completion:
    """One task of task_complete_many: finish it as succeeded with its result."""

    task_id: int
    worker: str
    claim: str | None
    result: JSON | None = None


@dataclass(frozen=True)
class Releasing:
    """One task of task_release_many: back to pending with its state after a delay."""

    task_id: int
    worker: str
    claim: str | None
    state: JSON | None = None
    delay: float = 0
    reason: str | None = None


@dataclass(frozen=True)
class Failure:
    """One task of task_fail_many: a failure, retried with backoff or final."""

    task_id: int
    worker: str
    claim: str | None
    error: str
    retry: bool = True
    traceback: str | None = None
    state: JSON | None = None


# Per task, in input order: its row after the change, or why it was not changed.
Settled = list[Task | LeaseLost | TaskNotFound]


class BatchesMixin(QueueBase):
    """The batched worker-side updates. Each call is one transaction; a task whose fence
    does not hold is left unchanged and reported as LeaseLost (or TaskNotFound) alone."""

    async def task_complete_many(self, items: Sequence[Completion]) -> Settled:
        """Complete many tasks in one statement."""
        params = _columns(items) | {
            "results": [self._jsonb(i.result, "the result") for i in items]}
        return await self._settle(items, "task_complete_many", params, wakes=False)

    async def task_release_many(self, items: Sequence[Releasing]) -> Settled:
        """Release many tasks in one statement (and one NOTIFY per capability)."""
        for item in items:
            check_delay(item.delay)
        params = _columns(items) | {
            "states": [self._jsonb(i.state, "the state") for i in items],
            "delays": [float(i.delay) for i in items], "reasons": [i.reason for i in items]}
        return await self._settle(items, "task_release_many", params, wakes=True)

    async def task_fail_many(self, items: Sequence[Failure]) -> Settled:
        """Record many failures in one statement (and one NOTIFY per capability)."""
        if any(not i.error.strip() for i in items):
            raise BadInput("the error must not be empty")
        params = _columns(items) | {
            "errors": [i.error for i in items], "retries": [i.retry for i in items],
            "tracebacks": [i.traceback for i in items],
            "states": [self._jsonb(i.state, "the state") for i in items]}
        return await self._settle(items, "task_fail_many", params, wakes=True)

    async def _settle(self, items: Sequence[Completion | Releasing | Failure], name: str,
                      params: dict[str, Any], wakes: bool) -> Settled:
        """Run one batched update; with `wakes`, NOTIFY claimers of every capability that got
        a task back to pending, in the same transaction."""
        if not items:
            return []
        async with self.pool.connection() as conn:
            if not wakes:
                cur = await conn.execute(query(name), params, prepare=True)
                found = await cur.fetchall()
            else:
                found = await self._settle_and_notify(conn, name, params)
            by_id = {r["id"]: r for r in found}
            missing = [i.task_id for i in items if i.task_id not in by_id]
            status = ({r["id"]: r for r in await self._all(conn, "task_status_many",
                                                            {"ids": missing})}
                      if missing else {})
        return [rows.task_from_row(by_id[i.task_id]) if i.task_id in by_id
                else _lost(i, status.get(i.task_id)) for i in items]

    async def _settle_and_notify(self, conn: Conn, name: str,
                                 params: dict[str, Any]) -> list[dict[str, Any]]:
        async with conn.transaction():
            cur = await conn.execute(query(name), params, prepare=True)
            found = await cur.fetchall()
            for capability in sorted({r["capability"] for r in found
                                      if r["status"] == "pending"}):
                await self._notify(conn, TASKS_CHANNEL, capability)
        return found


def _columns(items: Sequence[Completion | Releasing | Failure]) -> dict[str, Any]:
    for item in items:
        if not item.worker:
            raise BadInput("a worker name is required")
    return {"ids": [i.task_id for i in items], "workers": [i.worker for i in items],
            "claims": [check_claim(i.claim) for i in items]}


def _lost(item: Completion | Releasing | Failure,
          status: dict[str, Any] | None) -> LeaseLost | TaskNotFound:
    if status is None:
        return TaskNotFound(f"no such task: {item.task_id}")
    return LeaseLost(
        f"lease lost: task {item.task_id} is {status['status']}"
        + (f", held by {status['worker']}" if status["worker"] else "")
        + f"; {item.worker} no longer holds it")
