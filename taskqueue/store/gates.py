"""The gated actions' rows: the read right before an action, and its fenced marker and result."""

from __future__ import annotations

from typing import Any

from taskqueue.errors import LeaseLost, TaskNotFound
from taskqueue.store.base import Conn, QueueBase
from taskqueue.store.checks import check_claim
from taskqueue.store.groups import groups_from_json
from taskqueue.store.models import JSON
from taskqueue.store.passkeys import signed_people
from taskqueue.store.states import Decision
from taskqueue.store.work_models import GatedAction, GateView


def _action(row: dict[str, Any], prefix: str = "") -> GatedAction:
    def get(name: str) -> Any:
        return row[prefix + name]

    return GatedAction(
        approval_id=row["approval_id"], task_id=row["task_id"], kind=get("kind"),
        fingerprint=get("fingerprint"),
        key=str(get("key" if prefix else "idempotency_key")), approved_by=get("approved_by"),
        detail=get("detail"),
        worker=get("worker"), claim=str(get("claim" if prefix else "claim_token")),
        attempts=get("attempts"), started_at=get("started_at"), result=get("result"),
        settled_by=get("settled_by"), finished_at=get("finished_at"))


class GatesMixin(QueueBase):
    """TaskQueue's gated-action methods; the rules that use them live in runtime/gate.py."""

    async def gated_action_check(self, task_id: int) -> GateView:
        """The task, its latest approval and that approval's action, read now."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "gated_action_check", {"task_id": task_id})
            signatures = [] if row is None or not row["signed_approvals"] \
                or row["approval_id"] is None else await self._all(
                    conn, "approval_signatures", {"approval_id": row["approval_id"]})
        if row is None:
            raise TaskNotFound(f"no such task: {task_id}")
        signed_by = signed_people(signatures, row["approval_id"], row["request"] or {}) \
            if signatures else []
        claim = row["claim_token"]
        return GateView(
            task_id=task_id, status=row["status"], worker=row["worker"],
            claim=str(claim) if claim is not None else None, approval_id=row["approval_id"],
            decision=Decision(row["decision"]) if row["decision"] else None,
            decided_by=row["decided_by"], request=row["request"] or {},
            action=_action(row, "g_") if row["g_kind"] is not None else None,
            required=row["required"] or 1, approvers=tuple(row["approvers"] or ()),
            groups=groups_from_json(row["groups"]),
            signed_required=bool(row["signed_approvals"]), signed_by=tuple(signed_by))

    async def gated_action_start(self, task_id: int, worker: str, claim: str | None, *,
                                 approval_id: int, kind: str, fingerprint: str, key: str,
                                 detail: JSON | None = None, state: JSON | None = None
                                 ) -> GatedAction | None:
        """Save the started marker for `approval_id` (and `state`, in the same transaction).
        None: a marker for that approve is already there. LeaseLost: the claim is gone."""
        params = self._gate_fence(task_id, worker, claim) | {
            "approval_id": approval_id, "kind": kind, "fingerprint": fingerprint, "key": key,
            "detail": self._jsonb(detail, "the action's detail")}
        return await self._gate_write("gated_action_start", params, state)

    async def gated_action_restart(self, action: GatedAction, worker: str,
                                   claim: str | None) -> GatedAction | None:
        """Count one more attempt of an unfinished action (None: another slice did)."""
        params = self._gate_fence(action.task_id, worker, claim) | {
            "approval_id": action.approval_id, "attempts": action.attempts}
        return await self._gate_write("gated_action_restart", params, None)

    async def gated_action_finish(self, action: GatedAction, worker: str, claim: str | None,
                                  result: JSON | None, *, settled_by: str = "acted",
                                  state: JSON | None = None) -> GatedAction | None:
        """Record the action's result once (and `state`, in the same transaction)."""
        params = self._gate_fence(action.task_id, worker, claim) | {
            "approval_id": action.approval_id, "settled_by": settled_by,
            "result": self._jsonb(result, "the action's result")}
        return await self._gate_write("gated_action_finish", params, state)

    async def gated_action_drop(self, action: GatedAction, worker: str, claim: str | None,
                                *, state: JSON | None = None) -> GatedAction | None:
        """Remove an unfinished marker: the action certainly did not happen."""
        params = self._gate_fence(action.task_id, worker, claim) | {
            "approval_id": action.approval_id}
        return await self._gate_write("gated_action_drop", params, state)

    async def gated_action_list(self, task_id: int) -> list[GatedAction]:
        """Every gated action of a task, oldest approve first."""
        async with self.pool.connection() as conn:
            found = await self._all(conn, "gated_action_list", {"task_id": task_id})
        return [_action(r) for r in found]

    @staticmethod
    def _gate_fence(task_id: int, worker: str, claim: str | None) -> dict[str, Any]:
        return {"task_id": task_id, "worker": worker, "claim": check_claim(claim)}

    async def _gate_write(self, name: str, params: dict[str, Any],
                          state: JSON | None) -> GatedAction | None:
        saved = self._jsonb(state, "the state")
        async with self._tx() as conn:
            row = await self._one(conn, name, params)
            if row is None or not row["held"]:
                await self._lost(conn, params)
            assert row is not None
            if row["approval_id"] is None:
                return None
            if saved is not None:
                await self._one(conn, "task_save_state", {
                    "id": params["task_id"], "worker": params["worker"],
                    "claim": params["claim"], "state": saved})
        return _action(row)

    async def _lost(self, conn: Conn, params: dict[str, Any]) -> None:
        status = await self._one(conn, "task_status", {"id": params["task_id"]})
        if status is None:
            raise TaskNotFound(f"no such task: {params['task_id']}")
        raise LeaseLost(f"lease lost: task {params['task_id']} is {status['status']}; "
                        f"{params['worker']} no longer holds it")
