"""What a driver reports about one VM (`VmState`) and the readable diff between two of them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = ["ABSENT", "POWER_OFF", "POWER_ON", "SUSPENDED", "VmState", "diff_text"]

POWER_ON, POWER_OFF, SUSPENDED = "on", "off", "suspended"


@dataclass(frozen=True)
class VmState:
    """One VM as the hypervisor has it; `exists=False` stands for "no such VM".

    `boot` changes each time the VM boots where the hypervisor tells (vSphere's bootTime);
    it is kept out of diffs and fingerprints and only proves that a reboot happened."""

    name: str
    exists: bool = True
    power: str = POWER_OFF
    cpus: int = 0
    memory_mb: int = 0
    snapshots: tuple[str, ...] = ()
    current_snapshot: str | None = None
    folder: str = ""
    template: bool = False
    boot: str | None = field(default=None, compare=False)

    def shown(self) -> dict[str, Any]:
        """The fields a person approves (and the fingerprint covers)."""
        if not self.exists:
            return {"exists": False}
        data = asdict(self)
        data.pop("boot")
        data["snapshots"] = list(self.snapshots)
        return data

    def to_json(self) -> dict[str, Any]:
        return {**self.shown(), "name": self.name, "boot": self.boot}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VmState:
        if not data.get("exists", True):
            return cls(name=str(data.get("name", "")), exists=False)
        return cls(**{**data, "snapshots": tuple(data.get("snapshots", ()))})

    def changed(self, **changes: Any) -> VmState:
        return replace(self, **changes)


ABSENT = "(absent)"
_LABELS = {"exists": "exists", "power": "power", "cpus": "cpus", "memory_mb": "memory (MB)",
           "snapshots": "snapshots", "current_snapshot": "current snapshot",
           "folder": "folder", "template": "template"}


def _value(state: VmState, key: str) -> str:
    if key == "exists":
        return "yes" if state.exists else "no"
    if not state.exists:
        return ABSENT
    value = getattr(state, key)
    if key == "snapshots":
        return ", ".join(value) or "(none)"
    if value is None or value == "":
        return "(none)" if key == "current_snapshot" else "/"
    return str(value).lower() if isinstance(value, bool) else str(value)


def diff_text(before: VmState, after: VmState, notes: tuple[str, ...] = ()) -> str:
    """`- key: old` / `+ key: new` for what changes, `  key: value` for what stays."""
    lines = []
    width = max(len(label) for label in _LABELS.values()) + 1
    for key, label in _LABELS.items():
        old, new = _value(before, key), _value(after, key)
        if old == new:
            lines.append(f"  {label + ':':<{width}} {old}")
        else:
            lines += [f"- {label + ':':<{width}} {old}", f"+ {label + ':':<{width}} {new}"]
    return "\n".join([*lines, *(f"~ {note}" for note in notes)])
