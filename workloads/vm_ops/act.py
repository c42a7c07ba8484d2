"""Acting on an approve: at most one mutating call per approval, never one after a crash.

Before the call, the `acting` marker (the approved fingerprint, before and after, and the
approval) is saved, fenced on the claim. A slice that finds the marker does not know whether
the call happened, so it never calls again: it reads the VM, completes when it shows the
approved result, and otherwise parks the change again for a person to approve anew.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from taskqueue import Decision, Done, Fail, Outcome, Status
from workloads.vm_ops.driver import DriverError, reached, run_op
from workloads.vm_ops.job import VmJob
from workloads.vm_ops.ops import OpError, Plan
from workloads.vm_ops.review import KIND, plan_and_park, read_plan
from workloads.vm_ops.state import VmState

__all__ = ["act", "resume_after_act"]

UNPROVEN = ("the worker stopped after starting this change and the VM does not show its "
            "result; nothing was issued again. Approve to issue it again")


async def approval_problem(job: VmJob, approval_id: int) -> str | None:
    """Why the database does not allow acting on this approval now; None when it does."""
    fresh = await job.ctx.queue.task_get(job.task.id)
    a = fresh.approval
    if fresh.status != Status.RUNNING or fresh.claim != job.task.claim:
        return f"this worker no longer holds the task (it is {fresh.status.value})"
    if a is None or a.id != approval_id or a.decision != Decision.APPROVED:
        return "the latest decision is not this approve"
    if not (a.decided_by or "").strip():
        return "the approval names no person"
    if a.request.get("kind") != KIND or \
            a.request.get("fingerprint") != job.state.get("parked", {}).get("fingerprint"):
        return "the approved request is not the change this task parked"
    return None


async def act(job: VmJob, approval_id: int) -> Outcome:
    """An approve: check it, re-read the VM, act if nothing drifted, verify, complete."""
    await job.checkpoint("resume.start")
    problem = await approval_problem(job, approval_id)
    if problem is not None:
        await job.stage_event("act_refused", reason=problem)
        return Fail(f"refusing to act: {problem}", retryable=False)
    approved = job.state["parked"]["fingerprint"]
    try:
        p = await read_plan(job)
    except OpError as exc:
        await job.stage_event("refused", reason=str(exc))
        return Fail(f"the VM changed since the approve: {exc}", retryable=False)
    if p.fingerprint != approved:
        job.state["note"] = "the VM changed since your approve; this is the change now"
        await job.stage_event("drifted", approved=approved, now=p.fingerprint)
        return await plan_and_park(job)
    if job.op.action == "delete" and not job.op.delete_confirmed:
        job.state["note"] = f"type {job.op.vm} in a Revise note first; nothing was deleted"
        return await plan_and_park(job)
    await job.checkpoint("act.verified")
    return await _call(job, p, approval_id)


async def _call(job: VmJob, p: Plan, approval_id: int) -> Outcome:
    a = job.task.approval
    job.state["acting"] = {
        "fingerprint": p.fingerprint, "approval_id": approval_id,
        "approved_by": a.decided_by if a else None, "before": p.before.to_json(),
        "after": p.after.to_json(), "at": datetime.now(UTC).isoformat()}
    await job.save()
    await job.stage_event("acting", fingerprint=p.fingerprint)
    await job.checkpoint("act.marked")
    try:
        await job.call(run_op, job.driver, job.op)
    except DriverError as exc:
        # The hypervisor said no: nothing changed, so the task ends with its reason. A
        # retryable error keeps the marker: the next slice checks the VM instead of calling.
        if not exc.retryable:
            job.state.pop("acting")
            await job.save()
        await job.stage_event("act_failed", error=str(exc))
        return Fail(str(exc), retryable=exc.retryable)
    await job.checkpoint("act.issued")
    return await _verify(job, issued=True)


async def _verify(job: VmJob, *, issued: bool) -> Outcome:
    marker = job.state["acting"]
    before, after = VmState.from_json(marker["before"]), VmState.from_json(marker["after"])
    now = await job.read()
    if not reached(job.op, before, after, now, issued=issued):
        job.state.pop("acting")
        job.state["note"] = UNPROVEN if not issued else \
            "the hypervisor reported success but the VM does not show the approved result"
        await job.stage_event("unverified", issued=issued)
        return await plan_and_park(job)
    await job.checkpoint("act.done")
    await job.stage_event("completed", recovered=not issued)
    return Done(_result(job, marker, now, recovered=not issued))


def _result(job: VmJob, marker: dict[str, Any], now: VmState, *, recovered: bool
            ) -> dict[str, Any]:
    return {"status": "done", "vm": job.op.vm, "action": job.op.action,
            "host": job.driver.host, "fingerprint": marker["fingerprint"],
            "approval_id": marker["approval_id"], "approved_by": marker["approved_by"],
            "before": marker["before"], "after": marker["after"], "verified": now.to_json(),
            "recovered": recovered}


async def resume_after_act(job: VmJob) -> Outcome:
    """A slice that finds the marker: verify, never call again."""
    await job.stage_event("resumed_acting")
    return await _verify(job, issued=False)
