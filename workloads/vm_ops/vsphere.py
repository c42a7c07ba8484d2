"""The vSphere driver: pyVmomi against a vCenter (or govmomi's simulator, vcsim, in tests).

State is read through the PropertyCollector (never property accessors: an unset property,
such as a VM's `snapshot` when it has none, is simply left out that way). A task is waited
for by polling its `info.state`, so the caller's thread returns when vCenter says it ended.
"""

from __future__ import annotations

import re
import ssl
import time
from typing import Any
from urllib.parse import urlparse

from pyVim.connect import Disconnect, SmartStubAdapter
from pyVmomi import vim, vmodl

from workloads.vm_ops.driver import DriverError
from workloads.vm_ops.settings import VmSettings
from workloads.vm_ops.state import POWER_OFF, POWER_ON, SUSPENDED, VmState

__all__ = ["VSphereDriver"]

_POWER = {"poweredOn": POWER_ON, "poweredOff": POWER_OFF, "suspended": SUSPENDED}
_PROPS = ["name", "runtime.powerState", "runtime.bootTime", "config.hardware.numCPU",
          "config.hardware.memoryMB", "config.template", "snapshot", "parent"]
PC = vmodl.query.PropertyCollector


# vcsim puts the Go type (`*types.InvalidArgument`) where vCenter puts a sentence.
_GO_TYPE = re.compile(r"^\*?types\.\w+$")
# Fault fields worth naming beside the message (vmodl.fault.InvalidArgument and kin).
_DETAILS = (("invalidProperty", "property"), ("name", "name"), ("existingState", "state"),
            ("file", "file"))


def _fault_text(exc: BaseException) -> str:
    """A vSphere fault as one line: its name, message(s) and the property it names."""
    name = type(exc).__name__.rsplit(".", 1)[-1]
    if not isinstance(exc, vmodl.MethodFault):
        return str(exc) or name
    said = [str(getattr(exc, "msg", None) or "")]
    said += [str(m.message or m.key or "") for m in getattr(exc, "faultMessage", None) or ()]
    said = [m for m in dict.fromkeys(said) if m.strip() and not _GO_TYPE.match(m.strip())]
    details = [f"{label} {getattr(exc, field)}" for field, label in _DETAILS
               if isinstance(getattr(exc, field, None), str) and getattr(exc, field)]
    text = f"{name}: {'; '.join(said)}" if said else name
    return f"{text} ({', '.join(details)})" if details else text


def _error(exc: BaseException) -> DriverError:
    retryable = isinstance(exc, OSError)
    return DriverError(f"vSphere: {' '.join(_fault_text(exc).split())[:300]}",
                       retryable=retryable)


def _tls(settings: VmSettings) -> dict[str, Any]:
    """The TLS arguments: pyVmomi skips certificate checks for localhost, 127.0.0.1 and ::1
    unless it is handed a context, so verify_tls always hands it one that checks."""
    if not settings.verify_tls:
        return {"disableSslCertValidation": True}
    context = ssl.create_default_context(cafile=settings.ca_file or None)
    context.check_hostname, context.verify_mode = True, ssl.CERT_REQUIRED
    return {"sslContext": context}


def _connect_error(netloc: str, exc: Exception) -> DriverError:
    if isinstance(exc, ssl.SSLCertVerificationError):
        why = exc.verify_message or exc.reason or "certificate verify failed"
        return DriverError(f"vSphere: the certificate of {netloc} is not trusted ({why}); "
                           f"set ca_file to its CA, or verify_tls = false", retryable=True)
    return DriverError(f"vSphere: cannot connect to {netloc}: {exc}", retryable=True)


class VSphereDriver:
    """One logged-in session to a vCenter, scoped to one datacenter."""

    def __init__(self, si: Any, datacenter: Any, host: str, settings: VmSettings) -> None:
        self.si, self.dc, self.host, self.settings = si, datacenter, host, settings
        self.content = si.RetrieveContent()

    @classmethod
    def connect(cls, settings: VmSettings) -> VSphereDriver:
        url = urlparse(settings.vcenter_url)
        stub = None
        try:
            stub = SmartStubAdapter(host=url.hostname, port=url.port or 443,
                                    httpConnectionTimeout=30, **_tls(settings))
            si = vim.ServiceInstance("ServiceInstance", stub)
            sessions: Any = si.RetrieveContent().sessionManager
            sessions.Login(settings.user, settings.password, None)
        except vim.fault.InvalidLogin:
            stub.DropConnections()  # type: ignore[union-attr]
            raise DriverError(f"vSphere: login refused for {settings.user}") from None
        except Exception as exc:  # a network or TLS error: the vCenter may come back
            if stub is not None:
                stub.DropConnections()
            raise _connect_error(url.netloc, exc) from None
        dc = cls._datacenter(si, settings.datacenter)
        return cls(si, dc, f"{url.hostname}/{dc.name}", settings)

    @staticmethod
    def _datacenter(si: Any, name: str) -> Any:
        dcs = [e for e in si.RetrieveContent().rootFolder.childEntity
               if isinstance(e, vim.Datacenter)]
        for dc in dcs:
            if not name or dc.name == name:
                return dc
        Disconnect(si)
        raise DriverError(f"vSphere: no datacenter named {name!r}")

    def close(self) -> None:
        Disconnect(self.si)

    def _retrieve(self, objs: list[Any], kind: Any, paths: list[str]) -> list[dict[str, Any]]:
        spec = PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=o) for o in objs],
                             propSet=[PC.PropertySpec(type=kind, all=False, pathSet=paths)])
        out = self.content.propertyCollector.RetrieveContents([spec])
        return [{"obj": r.obj, **{p.name: p.val for p in r.propSet}} for r in out]

    def _find(self, name: str) -> Any | None:
        view = self.content.viewManager.CreateContainerView(
            self.dc.vmFolder, [vim.VirtualMachine], True)
        try:
            found = [r["obj"] for r in self._retrieve(list(view.view), vim.VirtualMachine,
                                                      ["name"]) if r.get("name") == name]
        finally:
            view.DestroyView()
        return found[0] if found else None

    def _vm(self, name: str) -> Any:
        vm = self._find(name)
        if vm is None:
            raise DriverError(f"vSphere: no VM named {name}")
        return vm

    def _folder_path(self, folder: Any) -> str:
        parts = []
        while folder is not None and folder != self.dc.vmFolder \
                and isinstance(folder, vim.Folder):
            parts.append(self._retrieve([folder], vim.Folder, ["name", "parent"])[0])
            folder = parts[-1].get("parent")
        return "/".join(p["name"] for p in reversed(parts))

    def read(self, name: str) -> VmState:
        try:
            vm = self._find(name)
            if vm is None:
                return VmState(name=name, exists=False)
            p = self._retrieve([vm], vim.VirtualMachine, _PROPS)[0]
            snaps, current = _snapshots(p.get("snapshot"))
            boot = p.get("runtime.bootTime")
            return VmState(
                name=name, power=_POWER.get(p["runtime.powerState"], p["runtime.powerState"]),
                cpus=int(p.get("config.hardware.numCPU", 0)),
                memory_mb=int(p.get("config.hardware.memoryMB", 0)), snapshots=snaps,
                current_snapshot=current, folder=self._folder_path(p.get("parent")),
                template=bool(p.get("config.template", False)),
                boot=boot.isoformat() if boot else None)
        except DriverError:
            raise
        except Exception as exc:
            raise _error(exc) from None

    def _wait(self, task: Any) -> None:
        deadline = time.monotonic() + self.settings.task_timeout
        while True:
            info = self._retrieve([task], vim.Task, ["info.state", "info.error"])[0]
            if info["info.state"] == "success":
                return
            if info["info.state"] == "error":
                raise _error(info.get("info.error") or RuntimeError("the task failed"))
            if time.monotonic() > deadline:
                raise DriverError(f"vSphere: the task did not finish within "
                                  f"{self.settings.task_timeout:g}s", retryable=True)
            time.sleep(self.settings.poll_seconds)

    def _task(self, start: Any) -> None:
        try:
            self._wait(start())
        except DriverError:
            raise
        except Exception as exc:
            raise _error(exc) from None

    def _pool(self, source: Any) -> Any:
        """Where a clone goes: the configured pool, else the source's own pool, else (a
        template has none) the root pool of its host's cluster or compute resource."""
        if self.settings.resource_pool:
            path = f"{self.dc.name}/host/{self.settings.resource_pool}"
            pool = self.content.searchIndex.FindByInventoryPath(path)
            if not isinstance(pool, vim.ResourcePool):
                raise DriverError(f"vSphere: resource_pool {self.settings.resource_pool!r} "
                                  f"is not a resource pool in {self.dc.name}")
            return pool
        vm = self._retrieve([source], vim.VirtualMachine, ["resourcePool", "runtime.host"])[0]
        if vm.get("resourcePool") is not None:
            return vm["resourcePool"]
        host = self._retrieve([vm["runtime.host"]], vim.HostSystem, ["parent"])[0]["parent"]
        return self._retrieve([host], vim.ComputeResource, ["resourcePool"])[0]["resourcePool"]

    def clone(self, template: str, name: str) -> None:
        source = self._vm(template)
        try:
            parent = self._retrieve([source], vim.VirtualMachine, ["parent"])[0]["parent"]
            location = vim.vm.RelocateSpec(pool=self._pool(source))
        except DriverError:
            raise
        except Exception as exc:
            raise _error(exc) from None
        spec = vim.vm.CloneSpec(location=location, powerOn=False, template=False)
        self._task(lambda: source.CloneVM_Task(folder=parent, name=name, spec=spec))

    def power_on(self, name: str) -> None:
        self._task(self._vm(name).PowerOnVM_Task)

    def power_off(self, name: str) -> None:
        self._task(self._vm(name).PowerOffVM_Task)

    def reboot(self, name: str) -> None:
        self._task(self._vm(name).ResetVM_Task)

    def snapshot(self, name: str, snapshot: str) -> None:
        vm = self._vm(name)
        self._task(lambda: vm.CreateSnapshot_Task(name=snapshot, description="signoff vm_ops",
                                                  memory=False, quiesce=False))

    def revert(self, name: str, snapshot: str) -> None:
        tree = self._retrieve([self._vm(name)], vim.VirtualMachine, ["snapshot"])[0]
        ref = _snapshot_ref(tree.get("snapshot"), snapshot)
        if ref is None:
            raise DriverError(f"vSphere: {name} has no snapshot named {snapshot}")
        self._task(ref.RevertToSnapshot_Task)

    def resize(self, name: str, cpus: int | None, memory_mb: int | None) -> None:
        vm = self._vm(name)
        self._task(lambda: vm.ReconfigVM_Task(vim.vm.ConfigSpec(numCPUs=cpus,
                                                                memoryMB=memory_mb)))

    def delete(self, name: str) -> None:
        self._task(self._vm(name).Destroy_Task)


def _walk(trees: Any) -> list[Any]:
    out = []
    for tree in trees or ():
        out += [tree, *_walk(tree.childSnapshotList)]
    return out


def _snapshots(info: Any) -> tuple[tuple[str, ...], str | None]:
    """The snapshot names (tree order) and the current one's name."""
    if info is None:
        return (), None
    nodes = _walk(info.rootSnapshotList)
    current = next((n.name for n in nodes if n.snapshot == info.currentSnapshot), None)
    return tuple(n.name for n in nodes), current


def _snapshot_ref(info: Any, name: str) -> Any | None:
    nodes = _walk(info.rootSnapshotList) if info is not None else []
    return next((n.snapshot for n in nodes if n.name == name), None)
