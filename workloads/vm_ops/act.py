"""Acting on an approve: at most one mutating call per approval, never one after a crash.

The call is the core's gated action (kind `vm_change`, the diff's fingerprint): right before
it, the approval is read again from the database and the VM again from the hypervisor (a
drift parks the new diff instead); the gate saves its marker (the approved before and after)
under the claim, then the call runs. A slice that finds the marker without a result never
calls again: the gate's verify reads the VM, which completes the task when it shows the
approved result; otherwise the change is parked again for a person to approve anew. Neither
vSphere nor libvirt takes an idempotency key.
"""

from __future__ import annotations

from typing import Any

from taskqueue import (
    ActionUncertain,
    Done,
    Fail,
    Gate,
    Gated,
    GatedAction,
    NotApproved,
    NothingHappened,
    Outcome,
    rename_points,
)
from workloads.vm_ops.driver import DriverError, reached, run_op
from workloads.vm_ops.job import VmJob
from workloads.vm_ops.ops import OpError
from workloads.vm_ops.review import KIND, plan_and_park, read_plan
from workloads.vm_ops.state import VmState

__all__ = ["act", "gate", "resume_after_act"]

UNPROVEN = ("the worker stopped after starting this change and the VM does not show its "
            "result; nothing was issued again. Approve to issue it again")
MAYBE = ("the worker stopped after starting this change, and this kind of change leaves "
         "nothing to read back (a reboot without a new boot time, or a revert to the snapshot "
         "that was already current): it may already have happened, and nothing was issued "
         "again. Check the VM, then approve to issue it again, or skip")
# The gate's steps under this workload's crash-point names.
POINT_NAMES = {"verified": "act.verified", "marked": "act.marked", "acted": "act.issued"}


def gate(job: VmJob) -> Gate:
    return job.ctx.gate(KIND, checkpoint=rename_points(job.checkpoint, POINT_NAMES))


async def act(job: VmJob, approval_id: int) -> Outcome:
    """A fresh approve: re-read the VM, act through the gate if nothing drifted, verify."""
    await job.checkpoint("resume.start")
    try:
        p = await read_plan(job)
    except OpError as exc:
        await job.stage_event("refused", reason=str(exc))
        return Fail(f"the VM changed since the approve: {exc}", retryable=False)
    approved = job.state.get("parked", {}).get("fingerprint")
    if p.fingerprint != approved:
        job.state["note"] = "the VM changed since your approve; this is the change now"
        await job.stage_event("drifted", approved=approved, now=p.fingerprint)
        return await plan_and_park(job)
    if job.op.action == "delete" and not job.op.delete_confirmed:
        job.state["note"] = f"type {job.op.vm} in a Revise note first; nothing was deleted"
        return await plan_and_park(job)
    return await _gated(job, p.fingerprint, {"before": p.before.to_json(),
                                             "after": p.after.to_json()})


async def resume_after_act(job: VmJob, started: GatedAction) -> Outcome:
    """A slice that finds this approve's call started: verify, never call again blindly."""
    await job.stage_event("resumed_acting")
    return await _gated(job, started.fingerprint, None)


async def _gated(job: VmJob, fingerprint: str, detail: dict[str, Any] | None) -> Outcome:
    async def call(action: GatedAction) -> None:
        await job.stage_event("acting", fingerprint=fingerprint)
        try:
            await job.call(run_op, job.driver, job.op)
        except DriverError as exc:
            # The hypervisor said no: nothing changed, so the marker goes and the task ends
            # with its reason. A retryable error keeps the marker: the next slice checks the
            # VM instead of calling.
            if not exc.retryable:
                raise NothingHappened(str(exc)) from exc
            raise

    async def shows(action: GatedAction) -> bool | None:
        before, after = _planned(action)
        return True if reached(job.op, before, after, await job.read(), issued=False) else None

    try:
        done = await gate(job).run(fingerprint, call, verify=shows, detail=detail,
                                   state=job.state)
    except NotApproved as exc:
        await job.stage_event("act_refused", reason=str(exc))
        return Fail(f"refusing to act: {exc}", retryable=False)
    except ActionUncertain as exc:
        return await _ask_again(job, exc.action)
    except (NothingHappened, DriverError) as exc:
        await job.stage_event("act_failed", error=str(exc))
        return Fail(str(exc), retryable=isinstance(exc, DriverError) and exc.retryable)
    return await _verify(job, done)


def _planned(action: GatedAction) -> tuple[VmState, VmState]:
    return VmState.from_json(action.detail["before"]), VmState.from_json(action.detail["after"])


async def _ask_again(job: VmJob, action: GatedAction) -> Outcome:
    """The call may or may not have happened and the VM cannot prove it: ask anew."""
    before, after = _planned(action)
    looks_done = reached(job.op, before, after, await job.read(), issued=True)
    job.state["note"] = MAYBE if looks_done else UNPROVEN
    await job.stage_event("unverified", issued=False)
    return await plan_and_park(job)


async def _verify(job: VmJob, done: Gated) -> Outcome:
    """The call returned (now or before a crash): the VM must show the approved result."""
    before, after = _planned(done.action)
    now = await job.read()
    if not reached(job.op, before, after, now, issued=True):
        job.state["note"] = \
            "the hypervisor reported success but the VM does not show the approved result"
        await job.stage_event("unverified", issued=True)
        return await plan_and_park(job)
    await job.checkpoint("act.done")
    await job.stage_event("completed", recovered=not done.acted_now)
    return Done(_result(job, done.action, now, recovered=not done.acted_now))


def _result(job: VmJob, action: GatedAction, now: VmState, *, recovered: bool
            ) -> dict[str, Any]:
    return {"status": "done", "vm": job.op.vm, "action": job.op.action,
            "host": job.driver.host, "fingerprint": action.fingerprint,
            "approval_id": action.approval_id, "approved_by": action.approved_by,
            "before": action.detail["before"], "after": action.detail["after"],
            "verified": now.to_json(), "recovered": recovered}
