"""Worker outcomes for many tasks at once: complete, release and fail, each task fenced alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from taskqueue.errors import BadInput, LeaseLost, TaskNotFound
from taskqueue.redact import redact
from taskqueue.store import rows
from taskqueue.store.base import TASKS_CHANNEL, Conn, QueueBase
from taskqueue.store.checks import check_claim, check_delay
from taskqueue.store.models import JSON, Task
from taskqueue.store.queries import query
from taskqueue.store.states import Status


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
# The same with the task's new status alone (task_settle_many, for workers).
SettledStatus = list[Status | LeaseLost | TaskNotFound]
Outcomes = Sequence[Completion] | Sequence[Releasing] | Sequence[Failure]
_Found = list[dict[str, Any] | LeaseLost | TaskNotFound]


class BatchesMixin(QueueBase):
    """The batched worker-side updates. Each call is one transaction; a task whose fence
    does not hold is left unchanged and reported as LeaseLost (or TaskNotFound) alone."""

    async def task_complete_many(self, items: Sequence[Completion]) -> Settled:
        """Complete many tasks in one statement."""
        return _tasks(await self._settle(items, full=True))

    async def task_release_many(self, items: Sequence[Releasing]) -> Settled:
        """Release many tasks in one statement (and one NOTIFY per capability)."""
        return _tasks(await self._settle(items, full=True))

    async def task_fail_many(self, items: Sequence[Failure]) -> Settled:
        """Record many failures in one statement (and one NOTIFY per capability)."""
        return _tasks(await self._settle(items, full=True))

    async def task_settle_many(self, items: Outcomes) -> SettledStatus:
        """task_complete_many, task_release_many or task_fail_many, by the kind of the
        items (one kind a call), answering each task's new status only: what a worker
        needs, without a whole row per task for the database to send and the client to
        read."""
        found = await self._settle(items, full=False)
        return [Status(r["status"]) if isinstance(r, dict) else r for r in found]

    def _statement(self, items: Outcomes) -> tuple[str, dict[str, Any]]:
        """The batched update for items of one kind, and its checked parameters."""
        first = items[0]
        if any(type(i) is not type(first) for i in items):
            raise BadInput("one kind of outcome a call: completions, releases or failures")
        if isinstance(first, Completion):
            return "task_complete_many", self._completions(cast(Sequence[Completion], items))
        if isinstance(first, Releasing):
            return "task_release_many", self._releases(cast(Sequence[Releasing], items))
        return "task_fail_many", self._failures(cast(Sequence[Failure], items))

    def _completions(self, items: Sequence[Completion]) -> dict[str, Any]:
        return _columns(items) | {
            "results": [self._jsonb(i.result, "the result") for i in items]}

    def _releases(self, items: Sequence[Releasing]) -> dict[str, Any]:
        for item in items:
            check_delay(item.delay)
        return _columns(items) | {
            "states": [self._jsonb(i.state, "the state") for i in items],
            "delays": [float(i.delay) for i in items], "reasons": [i.reason for i in items]}

    def _failures(self, items: Sequence[Failure]) -> dict[str, Any]:
        if any(not i.error.strip() for i in items):
            raise BadInput("the error must not be empty")
        return _columns(items) | {
            "errors": [redact(i.error) for i in items], "retries": [i.retry for i in items],
            "tracebacks": [redact(i.traceback) if i.traceback else None for i in items],
            "states": [self._jsonb(i.state, "the state") for i in items]}

    async def _settle(self, items: Outcomes, *, full: bool) -> _Found:
        """Run one batched update: each task's row (all its columns when `full`, else its
        id, status and capability), or why it was not changed. A release or a failure
        NOTIFYs the claimers of every capability that got a task back to pending, in the
        same transaction."""
        if not items:
            return []
        name, params = self._statement(items)
        statement = query(name) if full else _statuses_only(name)
        async with self.pool.connection() as conn:
            if isinstance(items[0], Completion):  # nothing goes back to pending
                cur = await conn.execute(statement, params, prepare=True)
                found = await cur.fetchall()
            else:
                found = await self._settle_and_notify(conn, statement, params)
            by_id = {r["id"]: r for r in found}
            missing = [i.task_id for i in items if i.task_id not in by_id]
            status = ({r["id"]: r for r in await self._all(conn, "task_status_many",
                                                            {"ids": missing})}
                      if missing else {})
        return [by_id[i.task_id] if i.task_id in by_id else _lost(i, status.get(i.task_id))
                for i in items]

    async def _settle_and_notify(self, conn: Conn, statement: str,
                                 params: dict[str, Any]) -> list[dict[str, Any]]:
        async with conn.transaction():
            cur = await conn.execute(statement, params, prepare=True)
            found = await cur.fetchall()
            for capability in sorted({r["capability"] for r in found
                                      if r["status"] == "pending"}):
                await self._notify(conn, TASKS_CHANNEL, capability)
        return found


_ALL_COLUMNS = "SELECT * FROM t"


@cache
def _statuses_only(name: str) -> str:
    """Batched update `name` answering each changed task's id, status and capability only:
    the same statement (its fences, events and locks) with a narrower final SELECT."""
    head, found, tail = query(name).rpartition(_ALL_COLUMNS)
    if not found or tail.strip():
        raise ValueError(f"query {name} does not end with {_ALL_COLUMNS!r}")
    return head + "SELECT t.id, t.status, t.capability FROM t"


def _tasks(found: _Found) -> Settled:
    return [rows.task_from_row(r) if isinstance(r, dict) else r for r in found]


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
