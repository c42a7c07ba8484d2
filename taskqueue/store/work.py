"""A worker's side of a task: the claim, the heartbeat, saved state and the outcomes of a
claimed task (release, park at a question, complete, fail). Every update is fenced by the
claim it holds: no row changed means LeaseLost (or TaskNotFound)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from taskqueue.errors import BadInput, LeaseLost, TaskNotFound
from taskqueue.redact import redact
from taskqueue.store import rows
from taskqueue.store.base import APPROVALS_CHANNEL, TASKS_CHANNEL, Conn, QueueBase
from taskqueue.store.checks import (
    MAX_ERROR_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TRACEBACK_CHARS,
    check_capability,
    check_claim,
    check_delay,
    check_name,
    check_setting,
    check_text,
)
from taskqueue.store.models import JSON, Approval, Task
from taskqueue.store.queries import query
from taskqueue.store.states import Status
from taskqueue.store.work_models import NewAttachment


class WorkMixin(QueueBase):
    """Each method is one transaction, named like its query."""

    async def task_claim(self, capability: str, worker: str, *,
                         lease: float | None = None) -> Task | None:
        """Take the next claimable task of `capability` for `worker`, or None."""
        found = await self.task_claim_many(capability, worker, 1, lease=lease)
        return found[0] if found else None

    async def task_claim_many(self, capability: str, worker: str, n: int, *,
                              lease: float | None = None,
                              answered_only: bool = False) -> list[Task]:
        """Take up to `n` claimable tasks in one statement, in claim order; caps stay exact.
        With `answered_only`, only tasks a person answered (approved or revised), which a
        worker's answer slot runs while its other slots are busy."""
        check_capability(capability)
        check_name(worker, "the worker name", required=True)
        self.schema_check_writable()
        if lease is not None and lease <= 0:
            raise BadInput("the lease must be a positive number of seconds")
        if n < 1:
            raise BadInput("n must be at least 1")
        params = {"capability": capability, "worker": worker, "lease": lease, "n": n,
                  "answered_only": answered_only}
        # One statement in autocommit, capped or not: the caps, the claim, its events and
        # the latest approvals are decided in the server's signoff_claim.
        async with self.pool.connection() as conn:
            cur = await conn.execute(query("task_claim"), params, prepare=True)
            return rows.claimed_from_rows(await cur.fetchall())

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
        return {"id": task_id, "worker": worker, "claim": check_claim(claim)}

    async def task_heartbeat(self, task_id: int, worker: str, *, claim: str | None = None,
                             lease: float | None = None) -> Task:
        """Extend the lease of a task this worker holds."""
        if lease is not None and lease <= 0:
            raise BadInput("the lease must be a positive number of seconds")
        async with self.pool.connection() as conn:  # one statement: autocommit
            params = self._fence(task_id, worker, claim) | {"lease": lease}
            row = await self._fenced(conn, "task_heartbeat", params)
        return rows.task_from_row(row)

    async def task_save_state(self, task_id: int, worker: str, state: JSON, *,
                              claim: str | None = None) -> Task:
        """Save intermediate state without releasing, so a crash does not redo the work."""
        params = self._fence(task_id, worker, claim) | {"state": self._jsonb(state, "the state")}
        async with self._tx() as conn:
            row = await self._fenced(conn, "task_save_state", params)
        return rows.task_from_row(row)

    async def task_release(self, task_id: int, worker: str, *, claim: str | None = None,
                           state: JSON | None = None, delay: float = 0,
                           reason: str | None = None) -> Task:
        """Put a running task back to pending with its state, optionally after a delay."""
        check_delay(delay)
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {
                "state": self._jsonb(state, "the state"), "delay": float(delay), "reason": reason}
            row = await self._fenced(conn, "task_release", params)
            await self._notify(conn, TASKS_CHANNEL, row["capability"])
        return rows.task_from_row(row)

    async def task_park(self, task_id: int, worker: str, question: str, *,
                        claim: str | None = None, request: JSON | None = None,
                        attachments: Iterable[NewAttachment] = (),
                        expires_in: float | None = None, state: JSON | None = None,
                        required_approvals: int | None = None) -> Approval:
        """Stop a running task at a question for a person; returns the new approval.
        `required_approvals` (default: the capability's, else 1) distinct people must approve."""
        check_text(question, "the question", MAX_QUESTION_CHARS, required=True)
        self.schema_check_writable()
        if required_approvals is not None:
            check_setting("required_approvals", required_approvals)
        if expires_in is not None and expires_in <= 0:
            raise BadInput("expires-in must be a positive number of seconds")
        files = [rows.check_attachment(a, self.max_attachment_bytes) for a in attachments]
        params = self._fence(task_id, worker, claim) | {"state": self._jsonb(state, "the state")}
        request_value = self._jsonb(request or {}, "the request")
        async with self._tx() as conn:
            task = await self._fenced(conn, "task_park", params)
            approval = await self._one(conn, "approval_insert", {
                "task_id": task_id, "question": question,
                "request": request_value, "expires_in": expires_in,
                "capability": task["capability"], "worker": worker,
                "required": required_approvals})
            assert approval is not None
            stored = [await self._one(conn, "attachment_insert",
                                      f | {"approval_id": approval["id"]}) for f in files]
            await self._notify(conn, APPROVALS_CHANNEL, str(approval["id"]))
        return rows.approval_from_row(
            approval, [rows.attachment_from_row(r) for r in stored if r is not None])

    async def task_complete(self, task_id: int, worker: str, *, claim: str | None = None,
                            result: JSON | None = None) -> Task:
        """Finish a running task as succeeded with its result."""
        # One statement (the update and its event) in autocommit: its own transaction.
        params = self._fence(task_id, worker, claim) | {"result": self._jsonb(result, "the result")}
        async with self.pool.connection() as conn:
            row = await self._fenced(conn, "task_complete", params)
        return rows.task_from_row(row)

    async def task_fail(self, task_id: int, worker: str, error: str, *,
                        claim: str | None = None, retry: bool = True,
                        traceback: str | None = None, state: JSON | None = None) -> Task:
        """Record a failure: back to pending with backoff, or failed past max_attempts.
        Registered secrets in the error and the traceback are masked before they are stored."""
        error, traceback = redact(error), redact(traceback) if traceback else traceback
        check_text(error, "the error", MAX_ERROR_CHARS, required=True)
        check_text(traceback, "the traceback", MAX_TRACEBACK_CHARS)
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {
                "error": error, "retry": retry, "traceback": traceback,
                "state": self._jsonb(state, "the state")}
            row = await self._fenced(conn, "task_fail", params)
            if row["status"] == Status.PENDING:
                await self._notify(conn, TASKS_CHANNEL, row["capability"])
        return rows.task_from_row(row)
