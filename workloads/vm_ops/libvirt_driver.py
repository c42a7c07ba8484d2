"""The libvirt driver: libvirt-python against a hypervisor URI (`test:///…` in tests).

One connection per URI per process, kept open: libvirt's test driver keeps its domains only
while a connection is open, and a real qemu:///system gains nothing from reconnecting.
CPUs and memory are read from (and resized in) the persistent definition, so a resize of a
running VM takes effect at its next boot, as on a homelab host without hotplug.
"""

from __future__ import annotations

import re
import threading
import xml.etree.ElementTree as ET
from typing import Any

import libvirt

from workloads.vm_ops.driver import DriverError
from workloads.vm_ops.state import POWER_OFF, POWER_ON, SUSPENDED, VmState

__all__ = ["MUTATING", "LibvirtDriver"]

# The connection and domain methods that change something (tests count them).
MUTATING = frozenset({"defineXML", "create", "destroy", "reboot", "reset", "shutdown",
                      "snapshotCreateXML", "revertToSnapshot", "setVcpusFlags",
                      "setMemoryFlags", "setMaxMemory", "undefine", "undefineFlags"})
_POWER = {libvirt.VIR_DOMAIN_RUNNING: POWER_ON, libvirt.VIR_DOMAIN_BLOCKED: POWER_ON,
          libvirt.VIR_DOMAIN_PAUSED: SUSPENDED, libvirt.VIR_DOMAIN_PMSUSPENDED: SUSPENDED}
_CONFIG = libvirt.VIR_DOMAIN_AFFECT_CONFIG
_OPEN: dict[str, Any] = {}
_LOCK = threading.Lock()


def _quiet(_ctx: object, _err: object) -> None:
    """libvirt prints every error to stderr by default; ours are raised as DriverError."""


libvirt.registerErrorHandler(_quiet, None)


def _error(exc: libvirt.libvirtError) -> DriverError:
    msg = " ".join(str(exc.get_error_message() or exc).split())[:300]
    return DriverError(f"libvirt: {msg}")


class LibvirtDriver:
    """Domains on one libvirt connection."""

    def __init__(self, conn: Any, uri: str) -> None:
        self.conn, self.host = conn, uri

    @classmethod
    def open(cls, uri: str) -> LibvirtDriver:
        with _LOCK:
            conn = _OPEN.get(uri)
            if conn is None or not conn.isAlive():
                try:
                    conn = _OPEN[uri] = libvirt.open(uri)
                except libvirt.libvirtError as exc:
                    raise DriverError(f"libvirt: cannot open {uri}: "
                                      f"{exc.get_error_message()}", retryable=True) from None
        return cls(conn, uri)

    def close(self) -> None:
        """The connection stays open for the next slice (see the module's docstring)."""

    def _dom(self, name: str) -> Any:
        try:
            return self.conn.lookupByName(name)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                raise DriverError(f"libvirt: no VM named {name}") from None
            raise _error(exc) from None

    def read(self, name: str) -> VmState:
        try:
            dom = self.conn.lookupByName(name)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                return VmState(name=name, exists=False)
            raise _error(exc) from None
        try:
            xml = ET.fromstring(dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
            snaps = dom.listAllSnapshots()
            current = dom.snapshotCurrent().getName() if dom.hasCurrentSnapshot() else None
            state = dom.state()[0]
        except libvirt.libvirtError as exc:
            raise _error(exc) from None
        return VmState(
            name=name, power=_POWER.get(state, POWER_OFF), cpus=int(xml.findtext("vcpu", "0")),
            memory_mb=_memory_mb(xml), current_snapshot=current,
            snapshots=tuple(s.getName() for s in sorted(snaps, key=_created)))

    def _call(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except libvirt.libvirtError as exc:
            raise _error(exc) from None

    def clone(self, template: str, name: str) -> None:
        try:
            xml = ET.fromstring(self._dom(template).XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
        except libvirt.libvirtError as exc:
            raise _error(exc) from None
        xml.find("name").text = name  # type: ignore[union-attr]
        for tag in ("uuid", "devices/interface/mac"):
            for node in xml.findall(tag):
                parent = xml.find("devices/interface") if "/" in tag else xml
                if parent is not None:
                    parent.remove(node)
        self._call(self.conn.defineXML, ET.tostring(xml, encoding="unicode"))

    def power_on(self, name: str) -> None:
        dom = self._dom(name)
        self._call(dom.resume if dom.state()[0] == libvirt.VIR_DOMAIN_PAUSED else dom.create)

    def power_off(self, name: str) -> None:
        self._call(self._dom(name).destroy)

    def reboot(self, name: str) -> None:
        self._call(self._dom(name).reboot, 0)

    def snapshot(self, name: str, snapshot: str) -> None:
        xml = (f"<domainsnapshot><name>{snapshot}</name>"
               "<description>signoff vm_ops</description></domainsnapshot>")
        self._call(self._dom(name).snapshotCreateXML, xml, 0)

    def revert(self, name: str, snapshot: str) -> None:
        dom = self._dom(name)
        try:
            snap = dom.snapshotLookupByName(snapshot, 0)
        except libvirt.libvirtError as exc:
            raise _error(exc) from None
        self._call(dom.revertToSnapshot, snap, 0)

    def resize(self, name: str, cpus: int | None, memory_mb: int | None) -> None:
        dom = self._dom(name)
        if cpus is not None:
            self._call(dom.setVcpusFlags, cpus, _CONFIG | libvirt.VIR_DOMAIN_VCPU_MAXIMUM)
            self._call(dom.setVcpusFlags, cpus, _CONFIG)
        if memory_mb is not None:
            kib = memory_mb * 1024
            self._call(dom.setMemoryFlags, kib, _CONFIG | libvirt.VIR_DOMAIN_MEM_MAXIMUM)
            self._call(dom.setMemoryFlags, kib, _CONFIG)

    def delete(self, name: str) -> None:
        self._call(self._dom(name).undefineFlags,
                   libvirt.VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA
                   | libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)


def _memory_mb(xml: ET.Element) -> int:
    node = xml.find("memory")
    if node is None or not (node.text or "").strip():
        return 0
    unit = (node.get("unit") or "KiB").lower()
    scale = {"b": 1 / 1024, "bytes": 1 / 1024, "kib": 1, "k": 1, "mib": 1024, "m": 1024,
             "gib": 1024 ** 2, "g": 1024 ** 2}.get(unit, 1)
    return int(int(node.text or 0) * scale) // 1024


def _created(snap: Any) -> tuple[int, str]:
    found = re.search(r"<creationTime>(\d+)</creationTime>", snap.getXMLDesc(0))
    return (int(found.group(1)) if found else 0, snap.getName())
