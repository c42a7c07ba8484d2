"""TaskQueue: the queue's public async API and the one place that runs its SQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from taskqueue import rows
from taskqueue.db import check_reachable, resolve_dsn
from taskqueue.errors import (
    AlreadyDecided,
    ApprovalExpired,
    BadInput,
    Conflict,
    LeaseLost,
    TaskNotFound,
)
from taskqueue.models import (
    JSON,
    Approval,
    Attachment,
    Capability,
    Event,
    NewAttachment,
    Task,
    TaskDetail,
)
from taskqueue.outbox import OutboxMixin
from taskqueue.queries import query
from taskqueue.states import RETRYABLE, UNFINISHED, Decision, Status

TASKS_CHANNEL = "signoff_tasks"
APPROVALS_CHANNEL = "signoff_approvals"

Conn = AsyncConnection[dict[str, Any]]


@dataclass(frozen=True)
class Enqueued:
    """The id of an enqueued task; `created` is False when a dedupe key matched."""

    id: int
    created: bool


@dataclass(frozen=True)
class NewTask:
    """One task of a batch enqueue."""

    payload: JSON
    priority: int = 0
    dedupe_key: str | None = None
    delay: float = 0
    max_attempts: int | None = None


def _jsonb(value: Any) -> Jsonb | None:
    return Jsonb(value) if value is not None else None


class TaskQueue(OutboxMixin):
    """Durable tasks in PostgreSQL. Every method is one transaction."""

    def __init__(self, pool: AsyncConnectionPool[Conn], *,
                 max_attachment_bytes: int = rows.DEFAULT_MAX_ATTACHMENT_BYTES) -> None:
        self.pool = pool
        self.max_attachment_bytes = max_attachment_bytes

    @classmethod
    @asynccontextmanager
    async def connect(cls, dsn: str | None = None, *, min_size: int = 1, max_size: int = 4,
                      **kwargs: Any) -> AsyncIterator[TaskQueue]:
        """Open a pool on `dsn` (DATABASE_URL or the embedded server when None)."""
        dsn = dsn or resolve_dsn()
        await check_reachable(dsn)
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            dsn, min_size=min_size, max_size=max_size, open=False,
            kwargs={"autocommit": True, "row_factory": dict_row},
            check=AsyncConnectionPool.check_connection,
        )
        await pool.open(wait=True, timeout=30)
        try:
            yield cls(pool, **kwargs)
        finally:
            await pool.close()

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Conn]:
        async with self.pool.connection() as conn, conn.transaction():
            yield conn

    @staticmethod
    async def _one(conn: Conn, name: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        cur = await conn.execute(query(name), params)
        return await cur.fetchone()

    @staticmethod
    async def _all(conn: Conn, name: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        cur = await conn.execute(query(name), params)
        return await cur.fetchall()

    async def _notify(self, conn: Conn, channel: str, payload: str) -> None:
        await conn.execute(query("notify"), {"channel": channel, "payload": payload})

    # -- producers ---------------------------------------------------------------

    async def task_enqueue(self, capability: str, payload: JSON | None = None, *,
                           priority: int = 0, dedupe_key: str | None = None,
                           delay: float = 0, max_attempts: int | None = None,
                           actor: str | None = None) -> Enqueued:
        """Add a task; a dedupe key held by an unfinished or succeeded task returns that task."""
        payload = {} if payload is None else payload
        item = NewTask(payload, priority, dedupe_key, delay, max_attempts)
        [result] = await self.task_enqueue_many(capability, [item], actor=actor)
        return result

    async def task_enqueue_many(self, capability: str, items: Sequence[NewTask], *,
                                actor: str | None = None) -> list[Enqueued]:
        """Add several tasks in one transaction: all of them or none."""
        _check_capability(capability)
        for item in items:
            _check_new_task(item)
        keys = sorted({item.dedupe_key for item in items if item.dedupe_key is not None})
        async with self._tx() as conn:
            if keys:
                await conn.execute(query("dedupe_lock"), {"capability": capability, "keys": keys})
            out = [await self._enqueue_one(conn, capability, item, actor) for item in items]
            if any(e.created for e in out):
                await self._notify(conn, TASKS_CHANNEL, capability)
        return out

    async def _enqueue_one(self, conn: Conn, capability: str, item: NewTask,
                           actor: str | None) -> Enqueued:
        params = {
            "capability": capability, "priority": item.priority,
            "payload": Jsonb(item.payload), "max_attempts": item.max_attempts,
            "delay": float(item.delay), "dedupe_key": item.dedupe_key, "actor": actor,
        }
        for _ in range(10):
            row = await self._one(conn, "task_enqueue", params)
            if row is not None:
                return Enqueued(row["id"], row["inserted"])
            await asyncio.sleep(0.01)
        raise Conflict(f"dedupe key {item.dedupe_key!r} is contended; try again")

    # -- workers -----------------------------------------------------------------

    async def task_claim(self, capability: str, worker: str, *,
                         lease: float | None = None) -> Task | None:
        """Take the next claimable task of `capability` for `worker`, or None."""
        _check_capability(capability)
        if not worker:
            raise BadInput("a worker name is required")
        if lease is not None and lease <= 0:
            raise BadInput("the lease must be a positive number of seconds")
        async with self._tx() as conn:
            cap = await self._one(conn, "capability_get", {"capability": capability})
            if cap and any(cap[k] is not None for k in ("max_running", "max_parked", "daily_new")):
                await conn.execute(query("claim_lock"), {"capability": capability})
            params = {"capability": capability, "worker": worker, "lease": lease}
            row = await self._one(conn, "task_claim", params)
            if row is None:
                return None
            approvals = await self._latest_approvals(conn, [row["id"]])
        return rows.task_from_row(row, approvals.get(row["id"]))

    async def _fenced(self, conn: Conn, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run a worker-side update; no row means the task is gone or the claim is lost."""
        row = await self._one(conn, name, params)
        if row is not None:
            return row
        status = await self._one(conn, "task_status", {"id": params["id"]})
        if status is None:
            raise TaskNotFound(f"no such task: {params['id']}")
        raise LeaseLost(
            f"lease lost: task {params['id']} is {status['status']}"
            + (f", held by {status['worker']}" if status["worker"] else "")
            + f"; {params['worker']} no longer holds it"
        )

    @staticmethod
    def _fence(task_id: int, worker: str, claim: str | None) -> dict[str, Any]:
        return {"id": task_id, "worker": worker, "claim": _check_claim(claim)}

    async def task_heartbeat(self, task_id: int, worker: str, *, claim: str | None = None,
                             lease: float | None = None) -> Task:
        """Extend the lease of a task this worker holds."""
        if lease is not None and lease <= 0:
            raise BadInput("the lease must be a positive number of seconds")
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {"lease": lease}
            row = await self._fenced(conn, "task_heartbeat", params)
        return rows.task_from_row(row)

    async def task_save_state(self, task_id: int, worker: str, state: JSON, *,
                              claim: str | None = None) -> Task:
        """Save intermediate state without releasing, so a crash does not redo the work."""
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {"state": Jsonb(state)}
            row = await self._fenced(conn, "task_save_state", params)
        return rows.task_from_row(row)

    async def task_release(self, task_id: int, worker: str, *, claim: str | None = None,
                           state: JSON | None = None, delay: float = 0,
                           reason: str | None = None) -> Task:
        """Put a running task back to pending with its state, optionally after a delay."""
        _check_delay(delay)
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {
                "state": _jsonb(state), "delay": float(delay), "reason": reason}
            row = await self._fenced(conn, "task_release", params)
            await self._notify(conn, TASKS_CHANNEL, row["capability"])
        return rows.task_from_row(row)

    async def task_park(self, task_id: int, worker: str, question: str, *,
                        claim: str | None = None, request: JSON | None = None,
                        attachments: Iterable[NewAttachment] = (),
                        expires_in: float | None = None, state: JSON | None = None) -> Approval:
        """Stop a running task at a question for a person; returns the new approval."""
        if not question.strip():
            raise BadInput("the question must not be empty")
        if expires_in is not None and expires_in <= 0:
            raise BadInput("expires-in must be a positive number of seconds")
        files = [rows.check_attachment(a, self.max_attachment_bytes) for a in attachments]
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {"state": _jsonb(state)}
            task = await self._fenced(conn, "task_park", params)
            approval = await self._one(conn, "approval_insert", {
                "task_id": task_id, "question": question, "request": Jsonb(request or {}),
                "expires_in": expires_in, "capability": task["capability"], "worker": worker})
            assert approval is not None
            stored = [await self._one(conn, "attachment_insert",
                                      f | {"approval_id": approval["id"]}) for f in files]
            await self._notify(conn, APPROVALS_CHANNEL, str(approval["id"]))
        return rows.approval_from_row(
            approval, [rows.attachment_from_row(r) for r in stored if r is not None])

    async def task_complete(self, task_id: int, worker: str, *, claim: str | None = None,
                            result: JSON | None = None) -> Task:
        """Finish a running task as succeeded with its result."""
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {"result": _jsonb(result)}
            row = await self._fenced(conn, "task_complete", params)
        return rows.task_from_row(row)

    async def task_fail(self, task_id: int, worker: str, error: str, *,
                        claim: str | None = None, retry: bool = True,
                        traceback: str | None = None, state: JSON | None = None) -> Task:
        """Record a failure: back to pending with backoff, or failed past max_attempts."""
        if not error.strip():
            raise BadInput("the error must not be empty")
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {
                "error": error, "retry": retry, "traceback": traceback, "state": _jsonb(state)}
            row = await self._fenced(conn, "task_fail", params)
            if row["status"] == Status.PENDING:
                await self._notify(conn, TASKS_CHANNEL, row["capability"])
        return rows.task_from_row(row)

    # -- people --------------------------------------------------------------------

    async def approval_decide(self, approval_id: int, decision: Decision | str, by: str,
                              note: str | None = None) -> Approval:
        """Record a person's decision on an open approval, once."""
        async with self._tx() as conn:
            row = await self._one(conn, "approval_lock", {"id": approval_id})
            if row is None:
                raise BadInput(f"no such approval: {approval_id}")
            result = await self._decide(conn, row, decision, by, note)
        return self._decided(result)

    async def approval_decide_for_task(self, task_id: int, decision: Decision | str, by: str,
                                       note: str | None = None) -> Approval:
        """Decide the latest approval of a task (what the CLI's approve/revise/skip do)."""
        async with self._tx() as conn:
            task = await self._one(conn, "task_get", {"id": task_id})
            if task is None:
                raise TaskNotFound(f"no such task: {task_id}")
            row = await self._one(conn, "approval_lock_latest_for_task", {"task_id": task_id})
            if row is None:
                raise Conflict(f"task {task_id} is {task['status']} and has no approval")
            result = await self._decide(conn, row, decision, by, note)
        return self._decided(result)

    @staticmethod
    def _decided(result: Approval | ApprovalExpired) -> Approval:
        # An expiry found at decision time is committed before it is reported.
        if isinstance(result, ApprovalExpired):
            raise result
        return result

    async def _decide(self, conn: Conn, row: dict[str, Any], decision: Decision | str, by: str,
                      note: str | None) -> Approval | ApprovalExpired:
        choice = _check_decision(decision, by, note)
        _refuse_decided(row)
        if not row.get("is_current", True):
            raise Conflict(f"approval {row['id']} of task {row['task_id']} was superseded by "
                           "a newer question")
        task = await self._one(conn, "task_lock", {"id": row["task_id"]})
        assert task is not None
        if task["status"] != Status.NEEDS_APPROVAL:
            raise Conflict(f"task {task['id']} is {task['status']}; its approval cannot be decided")
        if row["past_expiry"]:
            await self._all(conn, "approval_expire_many", {"approval_id": row["id"]})
            return ApprovalExpired(f"approval {row['id']} of task {task['id']} expired at "
                                   f"{row['expires_at'].isoformat()}")
        decided = await self._one(conn, "approval_decide",
                                  {"id": row["id"], "decision": choice.value, "by": by,
                                   "note": note})
        assert decided is not None
        await self._one(conn, "task_after_decision", {
            "id": task["id"], "decision": choice.value, "by": by, "note": note,
            "approval_id": row["id"]})
        await self._notify(conn, APPROVALS_CHANNEL, str(row["id"]))
        if choice is not Decision.SKIPPED:
            await self._notify(conn, TASKS_CHANNEL, task["capability"])
        return rows.approval_from_row(decided)

    # -- operators -----------------------------------------------------------------

    async def task_retry(self, task_id: int, *, actor: str | None = None) -> Task:
        """Put a failed, expired or cancelled task back to pending with attempts reset."""
        return await self._operator_move(task_id, RETRYABLE, Status.PENDING, "retried", actor)

    async def task_cancel(self, task_id: int, *, actor: str | None = None,
                          reason: str | None = None) -> Task:
        """Cancel an unfinished task; a running one's worker then finds its lease lost."""
        return await self._operator_move(task_id, UNFINISHED, Status.CANCELLED, "cancelled",
                                         actor, {"reason": reason} if reason else {})

    async def _operator_move(self, task_id: int, sources: frozenset[Status], target: Status,
                             kind: str, actor: str | None,
                             detail: JSON | None = None) -> Task:
        try:
            async with self._tx() as conn:
                old = await self._one(conn, "task_lock", {"id": task_id})
                if old is None:
                    raise TaskNotFound(f"no such task: {task_id}")
                if old["status"] not in sources:
                    verb = {"retried": "retry", "cancelled": "cancel"}.get(kind, kind)
                    raise Conflict(f"task {task_id} is {old['status']}; cannot {verb} it")
                row = await self._one(conn, "task_set_status", {
                    "id": task_id, "status": target.value, "old_status": old["status"],
                    "reset_attempts": target is Status.PENDING, "kind": kind, "actor": actor,
                    "detail": Jsonb(detail or {})})
                assert row is not None
                await self._notify(conn, TASKS_CHANNEL, row["capability"])
        except psycopg.errors.UniqueViolation:
            raise Conflict(f"task {task_id}: another task now holds its dedupe key") from None
        return rows.task_from_row(row)

    async def event_insert(self, task_id: int, kind: str, *, actor: str | None = None,
                           detail: JSON | None = None) -> Event:
        """Append an event that is not a transition (a refused tap, a sent message)."""
        try:
            async with self._tx() as conn:
                row = await self._one(conn, "event_insert", {
                    "task_id": task_id, "kind": kind, "actor": actor,
                    "detail": Jsonb(detail or {})})
        except psycopg.errors.ForeignKeyViolation:
            raise TaskNotFound(f"no such task: {task_id}") from None
        assert row is not None
        return rows.event_from_row(row)

    # -- reading -------------------------------------------------------------------

    async def _latest_approvals(self, conn: Conn, task_ids: list[int]) -> dict[int, Approval]:
        found = await self._all(conn, "approval_latest_many", {"task_ids": task_ids})
        files = await self._attachments(conn, [r["id"] for r in found])
        return {r["task_id"]: rows.approval_from_row(r, files.get(r["id"], ())) for r in found}

    async def _attachments(self, conn: Conn, approval_ids: list[int]
                           ) -> dict[int, list[Attachment]]:
        out: dict[int, list[Attachment]] = {}
        if approval_ids:
            for r in await self._all(conn, "attachment_list_many", {"approval_ids": approval_ids}):
                out.setdefault(r["approval_id"], []).append(rows.attachment_from_row(r))
        return out

    async def task_get(self, task_id: int) -> Task:
        """One task with its latest approval."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "task_get", {"id": task_id})
            if row is None:
                raise TaskNotFound(f"no such task: {task_id}")
            approvals = await self._latest_approvals(conn, [task_id])
        return rows.task_from_row(row, approvals.get(task_id))

    async def task_detail(self, task_id: int) -> TaskDetail:
        """A task, all its approvals (oldest first) and its events."""
        async with self._tx() as conn:
            row = await self._one(conn, "task_get", {"id": task_id})
            if row is None:
                raise TaskNotFound(f"no such task: {task_id}")
            found = await self._all(conn, "approval_list_for_task", {"task_id": task_id})
            files = await self._attachments(conn, [r["id"] for r in found])
            events = await self._all(conn, "event_list_for_task", {"task_id": task_id})
        approvals = tuple(rows.approval_from_row(r, files.get(r["id"], ())) for r in found)
        task = rows.task_from_row(row, approvals[-1] if approvals else None)
        return TaskDetail(task, approvals, tuple(rows.event_from_row(e) for e in events))

    async def task_list(self, *, status: Status | str | None = None,
                        capability: str | None = None, limit: int = 1000) -> list[Task]:
        """Tasks, oldest first, optionally of one status and capability."""
        if status is not None:
            status = _check_status(status)
        async with self._tx() as conn:
            found = await self._all(conn, "task_list", {
                "status": status, "capability": capability, "limit": limit})
            approvals = await self._latest_approvals(conn, [r["id"] for r in found])
        return [rows.task_from_row(r, approvals.get(r["id"])) for r in found]

    async def approval_get(self, approval_id: int) -> Approval:
        """One approval with its attachments' metadata."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "approval_get", {"id": approval_id})
            if row is None:
                raise BadInput(f"no such approval: {approval_id}")
            files = await self._attachments(conn, [approval_id])
        return rows.approval_from_row(row, files.get(approval_id, ()))

    async def approval_list_open(self) -> list[Approval]:
        """Unanswered approvals of parked tasks, oldest first."""
        async with self._tx() as conn:
            found = await self._all(conn, "approval_list_open", {})
            files = await self._attachments(conn, [r["id"] for r in found])
        return [rows.approval_from_row(r, files.get(r["id"], ())) for r in found]

    async def attachment_get(self, attachment_id: int) -> Attachment:
        """One attachment with its bytes."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "attachment_get", {"id": attachment_id})
        if row is None:
            raise BadInput(f"no such attachment: {attachment_id}")
        return rows.attachment_from_row(row)

    async def queue_summary(self) -> list[dict[str, Any]]:
        """Per capability and status: count and the oldest claimable task's time."""
        async with self.pool.connection() as conn:
            return await self._all(conn, "queue_summary", {})

    # -- capabilities -----------------------------------------------------------------

    async def capability_get(self, capability: str) -> Capability:
        """A capability's settings (the defaults when it has no row)."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "capability_get", {"capability": capability})
        return rows.capability_from_row(row) if row else Capability(capability)

    async def capability_list(self) -> list[Capability]:
        """Every capability that has settings."""
        async with self.pool.connection() as conn:
            return [rows.capability_from_row(r)
                    for r in await self._all(conn, "capability_list", {})]

    async def capability_set(self, capability: str, **changes: Any) -> Capability:
        """Change some settings of a capability; the others keep their values."""
        _check_capability(capability)
        known = set(Capability.__dataclass_fields__) - {"capability"}
        if unknown := set(changes) - known:
            raise BadInput(f"unknown capability setting: {', '.join(sorted(unknown))}")
        for key, value in changes.items():
            _check_setting(key, value)
        async with self._tx() as conn:
            if "day_timezone" in changes:
                ok = await self._one(conn, "timezone_exists", {"tz": changes["day_timezone"]})
                if not (ok and ok["ok"]):
                    raise BadInput(f"unknown time zone: {changes['day_timezone']}")
            await conn.execute(query("capability_lock"), {"capability": capability})
            row = await self._one(conn, "capability_get", {"capability": capability})
            current = rows.capability_from_row(row) if row else Capability(capability)
            merged = current.to_json() | changes
            saved = await self._one(conn, "capability_put", merged)
        assert saved is not None
        return rows.capability_from_row(saved)

    # -- background services ---------------------------------------------------------

    async def task_rescue_many(self, orphan_after: float) -> list[dict[str, Any]]:
        """Requeue (or fail) running tasks whose lease lapsed or stale ones with no lease."""
        async with self._tx() as conn:
            found = await self._all(conn, "task_rescue_many", {"orphan_after": orphan_after})
            for cap in sorted({r["capability"] for r in found if r["status"] == "pending"}):
                await self._notify(conn, TASKS_CHANNEL, cap)
        return found

    async def approval_expire_many(self) -> list[dict[str, Any]]:
        """Expire unanswered approvals past their expiry; their tasks end expired."""
        async with self._tx() as conn:
            found = await self._all(conn, "approval_expire_many", {"approval_id": None})
            for r in found:
                await self._notify(conn, APPROVALS_CHANNEL, str(r["approval_id"]))
        return found

    async def reaper_run_insert(self, **counts: int) -> dict[str, Any]:
        async with self._tx() as conn:
            row = await self._one(conn, "reaper_run_insert", counts)
        assert row is not None
        return row

    async def reaper_run_latest(self) -> dict[str, Any] | None:
        async with self.pool.connection() as conn:
            return await self._one(conn, "reaper_run_latest", {})

    async def signal_read(self, incident_age: float, nudge_age: float) -> dict[str, Any]:
        """The raw figures behind the signals, read in one snapshot."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            incident = await self._one(conn, "signal_incident", {"age_seconds": incident_age})
            nudge = await self._one(conn, "signal_nudge", {"age_seconds": nudge_age})
            counts = await self._one(conn, "signal_counts", {})
            reaper = await self._one(conn, "reaper_run_latest", {})
        return {"incident": incident, "nudge": nudge, "counts": counts, "reaper": reaper}


    # -- stats (issue 5) ----------------------------------------------------------------

    async def stats_read(self, capability: str) -> dict[str, Any]:
        """One capability's pipeline figures, read in one snapshot (see taskqueue.stats)."""
        params = {"capability": capability}
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            now = await self._one(conn, "stats_now", {})
            out: dict[str, Any] = {"read_at": now["read_at"] if now else None}
            for name in ("status_counts", "stage_counts", "skip_reasons", "report_reasons"):
                out[name] = await self._all(conn, f"stats_{name}", params)
            out["report_runs"] = await self._one(conn, "stats_report_runs", params)
        return out

    async def task_dedupe_known(self, capability: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` a task of `capability` holds as its dedupe key, in any status."""
        if not keys:
            return set()
        async with self.pool.connection() as conn:
            found = await self._all(conn, "task_dedupe_known",
                                    {"capability": capability, "keys": list(keys)})
        return {r["dedupe_key"] for r in found}

def _check_capability(capability: str) -> None:
    if not capability or not capability.strip() or len(capability) > 200:
        raise BadInput("a capability name must be 1 to 200 characters")


def _check_new_task(item: NewTask) -> None:
    if not isinstance(item.payload, dict):
        raise BadInput("a payload must be a JSON object")
    if not -(2**31) <= item.priority < 2**31:
        raise BadInput("a priority must be a 32-bit whole number")
    _check_delay(item.delay)
    if item.max_attempts is not None and item.max_attempts < 1:
        raise BadInput("max-attempts must be at least 1")
    if item.dedupe_key is not None and not item.dedupe_key:
        raise BadInput("a dedupe key must not be empty")


def _check_delay(delay: float) -> None:
    if delay < 0:
        raise BadInput("a delay must not be negative")


def _check_claim(claim: str | None) -> str | None:
    if claim is None:
        return None
    import uuid

    try:
        return str(uuid.UUID(claim))
    except ValueError:
        raise BadInput(f"claim token {claim!r} is not a UUID") from None


def _check_status(status: Status | str) -> str:
    try:
        return Status(status).value
    except ValueError:
        raise BadInput(f"unknown status {status!r}; one of: "
                       + ", ".join(s.value for s in Status)) from None


def _check_decision(decision: Decision | str, by: str, note: str | None) -> Decision:
    try:
        choice = Decision(decision)
    except ValueError:
        choice = None
    if choice is None or choice is Decision.EXPIRED:
        raise BadInput(f"a decision is approved, revised or skipped, not {decision!r}")
    if not by or not by.strip():
        raise BadInput("a decision must name who made it")
    if choice is Decision.REVISED and not (note and note.strip()):
        raise BadInput("a revise decision needs a note")
    return choice


def _refuse_decided(row: dict[str, Any]) -> None:
    if row["decision"] == Decision.EXPIRED:
        raise ApprovalExpired(f"approval {row['id']} of task {row['task_id']} expired at "
                              f"{row['decided_at'].isoformat()}")
    if row["decision"] is not None:
        raise AlreadyDecided(
            f"approval {row['id']} of task {row['task_id']} was already {row['decision']} "
            f"by {row['decided_by']} at {row['decided_at'].isoformat()}",
            decided_by=row["decided_by"], decision=row["decision"])


_INT_SETTINGS = {"max_running", "max_parked", "daily_new"}


def _check_setting(key: str, value: Any) -> None:
    if key == "day_timezone":
        if not isinstance(value, str) or not value:
            raise BadInput("day_timezone must be a time zone name")
        return
    if value is None and key in _INT_SETTINGS:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadInput(f"{key} must be a whole number")
    minimum = 0 if key in _INT_SETTINGS or key == "retry_base_seconds" else 1
    if value < minimum:
        raise BadInput(f"{key} must be at least {minimum}")
