"""The one interface every hypervisor driver implements, and how a result is checked.

A driver's methods block (pyVmomi and libvirt are synchronous); the handler runs them in a
thread. Each mutating method returns only once the hypervisor's task has finished, and
raises `DriverError` when it failed. `read` never changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from workloads.vm_ops.ops import Op
from workloads.vm_ops.state import VmState

__all__ = ["DriverError", "VmDriver", "reached", "run_op"]


class DriverError(Exception):
    """The hypervisor refused or failed; `retryable` when it may work later (a network error)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class VmDriver(Protocol):
    """Read one VM's state, and each operation (blocking; run it in a thread)."""

    host: str  # what the person sees as "on HOST" (vCenter and datacenter, or libvirt URI)

    def read(self, name: str) -> VmState: ...

    def clone(self, template: str, name: str) -> None: ...

    def power_on(self, name: str) -> None: ...

    def power_off(self, name: str) -> None: ...

    def reboot(self, name: str) -> None: ...

    def snapshot(self, name: str, snapshot: str) -> None: ...

    def revert(self, name: str, snapshot: str) -> None: ...

    def resize(self, name: str, cpus: int | None, memory_mb: int | None) -> None: ...

    def delete(self, name: str) -> None: ...

    def close(self) -> None: ...


_CALLS: dict[str, Callable[[VmDriver, Op], None]] = {
    "clone": lambda d, op: d.clone(str(op.template), op.vm),
    "power_on": lambda d, op: d.power_on(op.vm),
    "power_off": lambda d, op: d.power_off(op.vm),
    "reboot": lambda d, op: d.reboot(op.vm),
    "snapshot": lambda d, op: d.snapshot(op.vm, str(op.snapshot)),
    "revert": lambda d, op: d.revert(op.vm, str(op.snapshot)),
    "resize": lambda d, op: d.resize(op.vm, op.cpus, op.memory_mb),
    "delete": lambda d, op: d.delete(op.vm),
}


def run_op(driver: VmDriver, op: Op) -> None:
    """Issue `op` (the one mutating call of a change) and wait for it to finish."""
    _CALLS[op.action](driver, op)


def reached(op: Op, before: VmState, after: VmState, now: VmState, *, issued: bool) -> bool:
    """Whether `now` shows the approved `after` in what `op` changes.

    `issued`: this slice made the call and the hypervisor reported success. Without that
    (a slice resumed after a crash), a reboot is proven only by a new boot time and a revert
    to the snapshot that was already current cannot be proven at all."""
    a = op.action
    if a == "delete":
        return not now.exists
    if not now.exists:
        return False
    if a == "clone":
        return (now.cpus, now.memory_mb) == (after.cpus, after.memory_mb)
    if a in ("power_on", "power_off"):
        return now.power == after.power
    if a == "reboot":
        return now.power == after.power and (issued or (now.boot or "") != (before.boot or ""))
    if a == "snapshot":
        return op.snapshot in now.snapshots
    if a == "revert":
        return now.current_snapshot == op.snapshot and (
            issued or before.current_snapshot != op.snapshot)
    return (now.cpus, now.memory_mb) == (after.cpus, after.memory_mb)
