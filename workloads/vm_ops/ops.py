"""A task's operation: the payload checked strictly (`parse_op`), the allow list, and the plan.

`plan(op, before)` says what the VM looks like once the operation is done (the "after" a
person approves), or why it cannot be planned. The fingerprint covers the operation, the
before and the after, so an approve is only good for exactly the change it was shown.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from workloads.vm_ops.settings import VmSettings
from workloads.vm_ops.state import POWER_OFF, POWER_ON, VmState

__all__ = ["ACTIONS", "NAME", "Op", "OpError", "Plan", "allowed", "fingerprint", "parse_op",
           "plan"]

ACTIONS = ("clone", "power_on", "power_off", "reboot", "snapshot", "revert", "resize",
           "delete")
# Names a person can read in a chat and every hypervisor accepts: no spaces, no slashes.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
MIN_MEMORY_MB = 32
_ARGS = {"clone": {"template"}, "snapshot": {"snapshot"}, "revert": {"snapshot"},
         "resize": {"cpus", "memory_mb"}}
_PAYLOAD_KEYS = {"vm", "action", "reason", *set().union(*_ARGS.values())}


class OpError(ValueError):
    """The payload (or a revise note's adjustment) is not a valid operation; one line."""


@dataclass(frozen=True)
class Op:
    """One operation on one VM, with its arguments (unused ones stay None)."""

    vm: str
    action: str
    template: str | None = None
    snapshot: str | None = None
    cpus: int | None = None
    memory_mb: int | None = None
    reason: str = ""
    delete_confirmed: bool = field(default=False)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}

    def payload(self) -> dict[str, Any]:
        """As a task payload: without the confirmation, which only a person's note gives."""
        return {k: v for k, v in self.to_json().items() if k != "delete_confirmed"}

    def adjusted(self, settings: VmSettings, **args: Any) -> Op:
        """The same operation with some arguments replaced, checked like a payload."""
        return parse_op({**self.payload(), **args}, settings, confirmed=self.delete_confirmed)


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        shown = value if isinstance(value, str) and len(value) <= 70 else type(value).__name__
        raise OpError(f"{what} must be 1-63 letters, digits, '.', '_' or '-' "
                      f"(starting with a letter or digit), not {shown!r}")
    return value


def _whole(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OpError(f"{what} must be a whole number from {low} to {high}, not {value!r}")
    return value


def parse_op(payload: Any, settings: VmSettings, *, confirmed: bool = False) -> Op:
    """The operation a payload asks for; OpError with a one-line reason when it is not valid."""
    if not isinstance(payload, dict):
        raise OpError("the payload must be a JSON object")
    unknown = set(payload) - _PAYLOAD_KEYS
    if unknown:
        raise OpError(f"unknown payload keys: {', '.join(sorted(unknown))}")
    action = payload.get("action")
    if action not in ACTIONS:
        raise OpError(f"action must be one of {', '.join(ACTIONS)}, not {str(action)[:40]!r}")
    extra = {k for k in payload if k in _PAYLOAD_KEYS - {"vm", "action", "reason"}} \
        - _ARGS.get(action, set())
    if extra:
        raise OpError(f"{action} takes no {', '.join(sorted(extra))}")
    reason = payload.get("reason", "")
    if not isinstance(reason, str) or len(reason) > 500:
        raise OpError("reason must be a string of at most 500 characters")
    op = Op(vm=_name(payload.get("vm"), "vm"), action=action, reason=reason.strip(),
            delete_confirmed=confirmed and action == "delete")
    return _with_args(op, payload, settings)


def _with_args(op: Op, payload: dict[str, Any], settings: VmSettings) -> Op:
    if op.action == "clone":
        template = _name(payload.get("template"), "template")
        if template == op.vm:
            raise OpError("the clone's name must differ from its template's")
        return replace(op, template=template)
    if op.action in ("snapshot", "revert"):
        return replace(op, snapshot=_name(payload.get("snapshot"), "snapshot"))
    if op.action != "resize":
        return op
    cpus, memory = payload.get("cpus"), payload.get("memory_mb")
    if cpus is None and memory is None:
        raise OpError("resize needs cpus, memory_mb or both")
    if cpus is not None:
        op = replace(op, cpus=_whole(cpus, "cpus", 1, settings.max_cpus))
    if memory is not None:
        memory = _whole(memory, "memory_mb", MIN_MEMORY_MB, settings.max_memory_mb)
        if memory % 4:
            raise OpError(f"memory_mb must be a multiple of 4, not {memory}")
        op = replace(op, memory_mb=memory)
    return op


def allowed(settings: VmSettings, name: str, folder: str | None) -> bool:
    """Whether the allow list names this VM (by name, glob, or the folder it is in)."""
    if name in settings.allow_names:
        return True
    if any(fnmatch.fnmatchcase(name, p) for p in settings.allow_patterns):
        return True
    folder = (folder or "").strip("/")
    return any(
        folder == f or folder.startswith(f + "/") for f in settings.allow_folders if f)


@dataclass(frozen=True)
class Plan:
    """The change a person approves: the VM now, the VM after, and what the diff cannot say."""

    op: Op
    before: VmState
    after: VmState
    notes: tuple[str, ...] = ()

    @property
    def changes(self) -> bool:
        return self.before.shown() != self.after.shown() or self.op.action in ("reboot", "revert")

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.op, self.before, self.after)


def fingerprint(op: Op, before: VmState, after: VmState) -> str:
    """A short hash of (operation, before, after): what an approve is good for."""
    blob = json.dumps({"op": op.to_json(), "before": before.shown(), "after": after.shown()},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def plan(op: Op, before: VmState, template: VmState | None = None) -> Plan:
    """What `op` turns `before` into; OpError when it cannot apply to the VM as it is."""
    if op.action == "clone":
        return _plan_clone(op, before, template)
    if not before.exists:
        raise OpError(f"there is no VM named {op.vm}")
    if before.template and op.action in ("power_on", "reboot"):
        raise OpError(f"{op.vm} is a template; it cannot be powered on")
    after, notes = _after(op, before)
    return Plan(op, before, after, notes)


def _plan_clone(op: Op, before: VmState, template: VmState | None) -> Plan:
    if before.exists:
        raise OpError(f"a VM named {op.vm} already exists")
    if template is None or not template.exists:
        raise OpError(f"there is no template named {op.template}")
    after = VmState(name=op.vm, power=POWER_OFF, cpus=template.cpus,
                    memory_mb=template.memory_mb, folder=template.folder)
    return Plan(op, before, after, (f"clone of {op.template}, left powered off",))


def _after(op: Op, before: VmState) -> tuple[VmState, tuple[str, ...]]:
    a = op.action
    if a == "power_on":
        return before.changed(power=POWER_ON), ()
    if a == "power_off":
        return before.changed(power=POWER_OFF), ("a hard power off, like pulling the plug",)
    if a == "reboot":
        if before.power != POWER_ON:
            raise OpError(f"{op.vm} is not running (power {before.power}); nothing to reboot")
        return before, ("a hard reset: the VM restarts at once",)
    if a == "snapshot":
        if op.snapshot in before.snapshots:
            raise OpError(f"{op.vm} already has a snapshot named {op.snapshot}")
        return before.changed(snapshots=(*before.snapshots, op.snapshot),
                              current_snapshot=op.snapshot), ()
    if a == "revert":
        if op.snapshot not in before.snapshots:
            raise OpError(f"{op.vm} has no snapshot named {op.snapshot}")
        return before.changed(current_snapshot=op.snapshot), (
            f"disks (and power, CPUs and memory where saved) go back to snapshot {op.snapshot}; "
            "changes since then are lost",)
    if a == "resize":
        return before.changed(cpus=op.cpus or before.cpus,
                              memory_mb=op.memory_mb or before.memory_mb), ()
    if before.power != POWER_OFF:  # delete
        raise OpError(f"{op.vm} is powered {before.power}; power it off first (its own change)")
    return VmState(name=op.vm, exists=False), ("the VM and its disks are deleted for good",)
