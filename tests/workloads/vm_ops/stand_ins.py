"""The hypervisors the tests run against: govmomi's vcsim as a process, libvirt's test driver.

Both count the calls that change something: vcsim writes its SOAP traffic to a trace file
(`VcSim.mutations`), and the libvirt connection is wrapped so each mutating method call is
recorded (`CountingLibvirt`). Neither is a mock: the calls reach the real simulators.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workloads.vm_ops.driver import VmDriver
from workloads.vm_ops.libvirt_driver import MUTATING, LibvirtDriver
from workloads.vm_ops.settings import VmSettings

ROOT = Path(__file__).resolve().parents[3]
USER, PASSWORD = "alice", "s3cret"
VmDriverFactory = Callable[[VmSettings], VmDriver]
# The vSphere methods that change the inventory (vcsim's four VMs are DC0_H0_VM0 ...).
VSPHERE_MUTATING = ("CloneVM_Task", "PowerOnVM_Task", "PowerOffVM_Task", "ResetVM_Task",
                    "CreateSnapshot_Task", "RevertToSnapshot_Task", "ReconfigVM_Task",
                    "Destroy_Task", "MarkAsTemplate", "RebootGuest", "ShutdownGuest")
# A request's body opens with the method's element; its response's with `…Response`.
_REQUEST = re.compile(r"<soapenv:Body><(" + "|".join(VSPHERE_MUTATING) + r")[\s>]")

NODE_XML = """\
<node>
  <domain type="test">
    <name>lab-web</name>
    <memory unit="MiB">1024</memory>
    <vcpu>1</vcpu>
    <os><type>hvm</type></os>
  </domain>
  <domain type="test" xmlns:test="http://libvirt.org/schemas/domain/test/1.0">
    <test:runstate>5</test:runstate>
    <name>lab-tpl</name>
    <memory unit="MiB">512</memory>
    <vcpu>2</vcpu>
    <os><type>hvm</type></os>
  </domain>
</node>
"""


def build_vcsim() -> Path:
    """scripts/build-vcsim: builds once (about 15 s), then returns the cached binary."""
    out = subprocess.run([str(ROOT / "scripts" / "build-vcsim")], capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, f"build-vcsim failed: {out.stderr[-2000:]}"
    return Path(out.stdout.strip().splitlines()[-1])


@dataclass
class VcSim:
    """One running vcsim: its SDK URL, the file its SOAP traffic goes to, and its
    self-signed certificate (PEM)."""

    url: str
    trace: Path
    proc: subprocess.Popen[bytes]
    cert: Path

    def mutations(self) -> list[str]:
        """The mutating methods vCenter received so far, in order."""
        text = self.trace.read_text("utf-8", "replace") if self.trace.exists() else ""
        return _REQUEST.findall(text)

    def settings(self, **changes: Any) -> VmSettings:
        base: dict[str, Any] = {
            "driver": "vsphere", "vcenter_url": self.url, "user": USER, "password": PASSWORD,
            "datacenter": "DC0", "verify_tls": False, "poll_seconds": 0.02,
            "allow_patterns": ("DC0_*", "web-*")}
        return VmSettings(**{**base, **changes})


@contextmanager
def running_vcsim(binary: Path, folder: Path) -> Iterator[VcSim]:
    """vcsim on a free port of 127.0.0.1 over HTTPS, killed on exit."""
    trace, cert = folder / "vcsim-trace.log", folder / "vcsim-cert.pem"
    proc = subprocess.Popen([str(binary), "-port", "0", "-user", USER, "-pass", PASSWORD,
                             "-trace", str(trace), "-cert", str(cert)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()
        assert url.startswith("https://127.0.0.1:"), url
        yield VcSim(url, trace, proc, cert)
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@dataclass
class CountingLibvirt:
    """A driver factory on a libvirt URI whose connection records every mutating call."""

    uri: str
    calls: list[str] = field(default_factory=list)

    def settings(self, **changes: Any) -> VmSettings:
        base: dict[str, Any] = {"driver": "libvirt", "libvirt_uri": self.uri,
                                "allow_patterns": ("lab-*", "web-*")}
        return VmSettings(**{**base, **changes})

    def __call__(self, settings: VmSettings) -> LibvirtDriver:
        driver = LibvirtDriver.open(settings.libvirt_uri)
        driver.conn = _Counting(driver.conn, self.calls)
        return driver

    def mutations(self) -> list[str]:
        return list(self.calls)


class _Counting:
    """Passes every call through to the libvirt object, noting the mutating ones."""

    def __init__(self, target: Any, calls: list[str]) -> None:
        self._target, self._calls = target, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if name in MUTATING:
                self._calls.append(name)
            result = attr(*args, **kwargs)
            if name in ("lookupByName", "defineXML"):
                return _Counting(result, self._calls)
            return result

        return call
