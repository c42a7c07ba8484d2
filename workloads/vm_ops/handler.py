"""The vm_ops handler: every VM change is approved (as a diff) before it touches the hypervisor.

A slice: check the payload and the allow list (refusals end the task before any question),
then one of: resume after a crash mid-act (the gate shows the call started), act on a fresh approve
(`act.act`), read a revise note and ask again, or read the VM and park the change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from taskqueue import Decision, Fail, Handler, Outcome, Task, TaskContext, require_extra
from workloads.vm_ops.act import act, gate, resume_after_act
from workloads.vm_ops.checkpoints import Checkpoint, env_checkpoint
from workloads.vm_ops.driver import DriverError, VmDriver
from workloads.vm_ops.drivers import make_driver
from workloads.vm_ops.job import VmJob
from workloads.vm_ops.ops import Op, OpError, allowed, parse_op
from workloads.vm_ops.review import apply_note, fresh_decision, plan_and_park
from workloads.vm_ops.settings import VmSettings, load_settings

# Loading the handler checks both drivers' libraries (loaded when it first connects).
require_extra("vm", "the vm_ops workload", "pyVmomi", "libvirt")

__all__ = ["CAPABILITY", "MAX_RUNNING", "handle", "make_handler"]

CAPABILITY = "vm_ops"
MAX_RUNNING = 1  # one change at a time on a homelab
DriverFactory = Callable[[VmSettings], VmDriver]


async def handle(task: Task, ctx: TaskContext) -> Outcome:
    """The configured handler (`workloads.vm_ops.handler:handle`)."""
    return await make_handler(load_settings())(task, ctx)


def make_handler(settings: VmSettings, *, driver_factory: DriverFactory = make_driver,
                 checkpoint: Checkpoint = env_checkpoint) -> Handler:
    """A handler bound to `settings` (and, in tests, a counting driver and crash hooks)."""

    async def handler(task: Task, ctx: TaskContext) -> Outcome:
        try:
            op = _op(task, ctx, settings)
        except OpError as exc:
            ctx.log.warning("refused: %s", exc)
            return Fail(f"invalid request: {exc}", retryable=False)
        try:
            driver = await asyncio.to_thread(driver_factory, settings)
        except DriverError as exc:
            return Fail(str(exc), retryable=exc.retryable)
        try:
            return await run(VmJob(task, ctx, settings, driver, op, checkpoint))
        except DriverError as exc:
            return Fail(str(exc), retryable=exc.retryable)
        finally:
            await asyncio.to_thread(driver.close)

    return handler


def _op(task: Task, ctx: TaskContext, settings: VmSettings) -> Op:
    """The payload's operation, as adjusted by earlier revise notes (kept in the state)."""
    op = parse_op(task.payload, settings)
    saved = ctx.state.get("op")
    if isinstance(saved, dict):
        payload = {k: v for k, v in saved.items() if k != "delete_confirmed"}
        op = parse_op(payload, settings, confirmed=saved.get("delete_confirmed") is True)
        if (op.vm, op.action) != (task.payload["vm"], task.payload["action"]):
            raise OpError("the saved operation does not match the payload")
    if op.action == "delete" and not settings.allow_delete:
        raise OpError("deleting VMs is turned off (allow_delete = false)")
    return op


async def run(job: VmJob) -> Outcome:
    """Refuse VMs outside the allow list, then resume, act, re-ask or park."""
    problem = await _not_allowed(job)
    if problem:
        await job.stage_event("refused", reason=problem)
        return Fail(problem, retryable=False)
    started = await gate(job).started()
    if started is not None:  # this approve's call was started: never repeat it blindly
        return await resume_after_act(job, started)
    decision = fresh_decision(job)
    if decision is not None and decision[0] == Decision.APPROVED:
        return await act(job, decision[2])
    if decision is not None:
        await apply_note(job, decision[1])
    return await plan_and_park(job)


async def _not_allowed(job: VmJob) -> str | None:
    """Why this VM may not be touched (None if it may); clones go to the template's folder."""
    op, settings = job.op, job.settings
    where = await job.read(op.template if op.action == "clone" else op.vm)
    if not allowed(settings, op.vm, where.folder if where.exists else None):
        return f"{op.vm} is not in the allow list ([workloads.vm_ops] allow_*)"
    return None
