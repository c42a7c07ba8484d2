"""Picks and connects the driver the settings name; the drivers' libraries load only here,
so a host without pyVmomi or libvirt-python can still import the rest of the workload."""

from __future__ import annotations

from workloads.vm_ops.driver import VmDriver
from workloads.vm_ops.settings import VmSettings


def make_driver(settings: VmSettings) -> VmDriver:
    """The configured driver, connected (blocking)."""
    if settings.driver == "vsphere":
        from workloads.vm_ops.vsphere import VSphereDriver

        return VSphereDriver.connect(settings)
    from workloads.vm_ops.libvirt_driver import LibvirtDriver

    return LibvirtDriver.open(settings.libvirt_uri)
