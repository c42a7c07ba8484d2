"""Asking a person: the `vm_change` request (a readable diff), and reading their decision.

A decision is read once (its approval id is kept in `state["consumed"]`). Approve: the
handler acts, if the VM still matches what was shown. Revise: the note is read (see
`apply_note`), the VM read again, and the change parked again. Skip and expiry end the task
in the queue itself.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from taskqueue import Decision, Done, Fail, Outcome, Park
from workloads.vm_ops.job import VmJob
from workloads.vm_ops.ops import Op, OpError, Plan, plan
from workloads.vm_ops.state import diff_text

__all__ = ["KIND", "apply_note", "fresh_decision", "plan_and_park", "read_plan"]

KIND = "vm_change"
LABELS = {"clone": "Create {vm} as a clone of {template}", "power_on": "Power on {vm}",
          "power_off": "Power off {vm}", "reboot": "Reboot {vm}",
          "snapshot": "Snapshot {vm} as {snapshot}", "revert": "Revert {vm} to {snapshot}",
          "resize": "Resize {vm}", "delete": "Delete {vm}"}
_ADJUST = {"resize": {"cpus", "memory_mb"}, "snapshot": {"snapshot"}, "revert": {"snapshot"},
           "clone": {"template"}}
_LINE = re.compile(r"^\s*([a-z_]+)\s*[:=]\s*(\S+)\s*$")


def label(op: Op) -> str:
    return LABELS[op.action].format(**{k: v for k, v in op.to_json().items()})


def how_to_revise(op: Op) -> str:
    if op.action == "delete" and not op.delete_confirmed:
        return (f"To delete, Revise with the VM's name ({op.vm}) as the note, then approve "
                "the request that follows. Approving this one does not delete anything.")
    keys = sorted(_ADJUST.get(op.action, ()))
    shown = " or ".join(f"`{k}: VALUE`" for k in keys)
    lines = f" Revise with {shown} lines to change it." if keys else ""
    return f"Approve to apply exactly this change.{lines} Any revise re-reads the VM."


async def read_plan(job: VmJob) -> Plan:
    """The VM as it is now, and what the operation would make of it (OpError if impossible)."""
    before = await job.read()
    template = await job.read(job.op.template) if job.op.action == "clone" else None
    return plan(job.op, before, template)


def request_for(job: VmJob, p: Plan, note: str) -> dict[str, Any]:
    reason = "; ".join(x for x in (job.op.reason, note) if x)
    return {
        "kind": KIND, "vm": job.op.vm, "host": job.driver.host, "action": label(job.op),
        "diff": diff_text(p.before, p.after, p.notes), "reason": reason,
        "before": p.before.to_json(), "after": p.after.to_json(), "op": job.op.to_json(),
        "fingerprint": p.fingerprint, "how_to_revise": how_to_revise(job.op),
    }


async def plan_and_park(job: VmJob) -> Outcome:
    """Read the VM, compute the change, and park it (or finish when nothing would change)."""
    try:
        p = await read_plan(job)
    except OpError as exc:
        await job.stage_event("refused", reason=str(exc))
        return Fail(str(exc), retryable=False)
    if not p.changes:
        await job.stage_event("no_change")
        return Done({"status": "no_change", "vm": job.op.vm, "action": job.op.action,
                     "host": job.driver.host, "state": p.before.to_json()})
    note = job.state.pop("note", "")
    request = request_for(job, p, note)
    job.state.update(op=job.op.to_json(), parked={"fingerprint": p.fingerprint})
    await job.stage_event("parked", fingerprint=p.fingerprint)
    await job.checkpoint("park.before")
    approvals = job.settings.delete_approvals if job.op.action == "delete" else None
    return Park(f"{label(job.op)} on {job.driver.host}?", request=request,
                state=dict(job.state), required_approvals=approvals)


def fresh_decision(job: VmJob) -> tuple[Decision, str, int] | None:
    """The latest approve or revise of our own question, if not read before."""
    a = job.task.approval
    if a is None or a.id == job.state.get("consumed") or a.request.get("kind") != KIND:
        return None
    if a.decision not in (Decision.APPROVED, Decision.REVISED):
        return None
    job.state["consumed"] = a.id
    return a.decision, a.note or "", a.id


async def apply_note(job: VmJob, note: str) -> None:
    """A revise: the VM's exact name confirms a delete; `key: value` lines adjust arguments.

    Anything else only re-reads the VM and asks again; the note's effect is shown in the
    request's reason."""
    if job.op.action == "delete":
        await _confirm_delete(job, note.strip() == job.op.vm)
        return
    changes = _adjustments(job.op, note)
    try:
        job.op = job.op.adjusted(job.settings, **changes) if changes else job.op
    except OpError as exc:
        job.state["note"] = f"your note was not applied: {exc}"
    else:
        applied = ", ".join(f"{k}={v}" for k, v in sorted(changes.items()))
        job.state["note"] = f"adjusted as you asked: {applied}" if changes else \
            f"asked again after your note: {' '.join(note.split())[:200]}"
    await job.stage_event("revised", adjusted=sorted(changes))


async def _confirm_delete(job: VmJob, typed: bool) -> None:
    """The exact name confirms; anything else withdraws an earlier confirmation."""
    job.op = replace(job.op, delete_confirmed=typed)
    if typed:
        job.state["note"] = f"the name {job.op.vm} was typed back: approve to delete it"
        await job.stage_event("delete_confirmed")
    else:
        job.state["note"] = f"the note was not the name {job.op.vm}: nothing is confirmed"
        await job.stage_event("revised", adjusted=[])


def _adjustments(op: Op, note: str) -> dict[str, Any]:
    """The note's `key: value` lines for the arguments this operation takes."""
    changes: dict[str, Any] = {}
    for line in note.splitlines():
        m = _LINE.match(line)
        if m and m.group(1) in _ADJUST.get(op.action, ()):
            value = m.group(2)
            changes[m.group(1)] = int(value) if value.isdigit() else value
    return changes
