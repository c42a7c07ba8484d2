"""Both drivers against their real simulators: each operation ends as its plan said."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from pyVmomi import vim, vmodl

from workloads.vm_ops.driver import DriverError, VmDriver, reached, run_op
from workloads.vm_ops.drivers import make_driver
from workloads.vm_ops.ops import parse_op, plan
from workloads.vm_ops.settings import VmSettings

from .stand_ins import CountingLibvirt, VcSim


@dataclass
class Host:
    settings: VmSettings
    driver: VmDriver
    vm: str
    template: str
    mutations: Callable[[], list[str]]


@pytest.fixture(params=["vsphere", "libvirt"])
def host(request: pytest.FixtureRequest) -> Host:
    if request.param == "vsphere":
        sim: VcSim = request.getfixturevalue("vcsim")
        settings = sim.settings()
        return Host(settings, make_driver(settings), "DC0_H0_VM0", "DC0_H0_VM1",
                    sim.mutations)
    lv: CountingLibvirt = request.getfixturevalue("libvirt_host")
    settings = lv.settings()
    return Host(settings, lv(settings), "lab-web", "lab-tpl", lv.mutations)


STEPS = [
    {"action": "power_off"},
    {"action": "resize", "cpus": 3, "memory_mb": 2048},
    {"action": "snapshot", "snapshot": "before-upgrade"},
    {"action": "resize", "cpus": 1},
    {"action": "power_on"},
    {"action": "reboot"},
    {"action": "snapshot", "snapshot": "second"},
    {"action": "revert", "snapshot": "before-upgrade"},
]


def test_every_operation_reaches_its_planned_after(host: Host) -> None:
    d, s = host.driver, host.settings
    try:
        for step in STEPS:
            op = parse_op({"vm": host.vm, **step}, s)
            p = plan(op, d.read(host.vm))
            run_op(d, op)
            now = d.read(host.vm)
            assert reached(op, p.before, p.after, now, issued=True), (step, now)
            if op.action not in ("revert", "reboot"):
                assert now.shown() == p.after.shown(), step
        clone = parse_op({"vm": "web-01", "action": "clone", "template": host.template}, s)
        p = plan(clone, d.read("web-01"), d.read(host.template))
        run_op(d, clone)
        assert d.read("web-01").shown() == p.after.shown()
        delete = parse_op({"vm": "web-01", "action": "delete"}, s)
        p = plan(delete, d.read("web-01"))
        run_op(d, delete)
        assert not d.read("web-01").exists
        assert reached(delete, p.before, p.after, d.read("web-01"), issued=False)
    finally:
        d.close()
    assert len(host.mutations()) >= len(STEPS) + 2


def test_reads_change_nothing_and_errors_are_one_line(host: Host) -> None:
    d = host.driver
    try:
        for _ in range(3):
            d.read(host.vm)
            d.read("no-such-vm")
        assert not d.read("no-such-vm").exists
        with pytest.raises(DriverError) as err:
            d.revert(host.vm, "missing")
        assert "\n" not in str(err.value)
    finally:
        d.close()
    assert host.mutations() == []


def test_vsphere_refuses_a_wrong_password(vcsim: VcSim) -> None:
    with pytest.raises(DriverError, match="login refused for alice"):
        make_driver(vcsim.settings(password="wrong"))


def _mark_as_template(driver: VmDriver, name: str) -> None:
    """Power the VM off and mark it as a template, with pyVmomi (as an operator would)."""
    driver.power_off(name)
    vm = driver._vm(name)  # type: ignore[attr-defined]
    vm.MarkAsTemplate()
    assert driver.read(name).template


def _pool_path(driver: VmDriver, name: str) -> str:
    """The new VM's resource pool as `compute resource/Resources[/child]`."""
    pool, names = driver._vm(name).resourcePool, []  # type: ignore[attr-defined]
    while isinstance(pool, vim.ResourcePool):
        names.append(pool.name)
        pool = pool.parent
    return "/".join([pool.name, *reversed(names)])


@pytest.mark.parametrize(("template", "pool"), [
    ("DC0_H0_VM1", "DC0_H0/Resources"),  # a template on a standalone host
    ("DC0_C0_RP0_VM1", "DC0_C0/Resources"),  # a template in a cluster
])
def test_vsphere_clones_from_a_vm_marked_as_template(vcsim: VcSim, template: str,
                                                     pool: str) -> None:
    d = make_driver(vcsim.settings())
    try:
        _mark_as_template(d, template)
        before = len(vcsim.mutations())
        d.clone(template, "web-01")
        clone = d.read("web-01")
        assert clone.exists and not clone.template and clone.power == "off"
        assert _pool_path(d, "web-01") == pool
        assert d.read(template).template  # the template stays one
    finally:
        d.close()
    assert vcsim.mutations()[before:] == ["CloneVM_Task"]


def test_vsphere_clones_into_the_configured_resource_pool(vcsim: VcSim) -> None:
    d = make_driver(vcsim.settings(resource_pool="DC0_C0/Resources/lab"))
    try:
        root = d.content.searchIndex.FindByInventoryPath(  # type: ignore[attr-defined]
            "DC0/host/DC0_C0/Resources")
        share = vim.SharesInfo(level="normal", shares=0)
        alloc = vim.ResourceAllocationInfo(reservation=0, limit=-1, shares=share,
                                           expandableReservation=True)
        root.CreateResourcePool("lab", vim.ResourceConfigSpec(cpuAllocation=alloc,
                                                              memoryAllocation=alloc))
        _mark_as_template(d, "DC0_H0_VM1")
        d.clone("DC0_H0_VM1", "web-01")  # from a template
        d.clone("DC0_H0_VM0", "web-02")  # from a plain VM
        assert _pool_path(d, "web-01") == _pool_path(d, "web-02") == "DC0_C0/Resources/lab"
    finally:
        d.close()


def test_vsphere_refuses_a_resource_pool_that_is_not_there(vcsim: VcSim) -> None:
    d = make_driver(vcsim.settings(resource_pool="DC0_C0/Resources/nope"))
    try:
        with pytest.raises(DriverError, match="resource_pool 'DC0_C0/Resources/nope' is not "
                                              "a resource pool in DC0") as err:
            d.clone("DC0_H0_VM0", "web-01")
        assert not err.value.retryable and not d.read("web-01").exists
    finally:
        d.close()
    assert "CloneVM_Task" not in vcsim.mutations()


def test_vsphere_faults_name_their_message_and_property_not_a_go_type(vcsim: VcSim) -> None:
    d = make_driver(vcsim.settings())
    try:
        _mark_as_template(d, "DC0_H0_VM1")
        with pytest.raises(DriverError) as err:
            d.power_on("DC0_H0_VM1")  # vCenter's own words: a SOAP fault with a message
        assert str(err.value) == "vSphere: InvalidState: cannot powerOn a template"
        source = d._vm("DC0_H0_VM1")  # type: ignore[attr-defined]
        bare = vim.vm.CloneSpec(location=vim.vm.RelocateSpec())  # the old clone: no pool
        with pytest.raises(DriverError) as err:
            d._task(lambda: source.CloneVM_Task(  # type: ignore[attr-defined]
                folder=d.dc.vmFolder, name="web-01", spec=bare))  # type: ignore[attr-defined]
        # vcsim's task fault carries only the Go type as its message: left out.
        assert str(err.value) == "vSphere: InvalidArgument (property spec.location.pool)"
        assert "types." not in str(err.value) and not err.value.retryable
    finally:
        d.close()


def test_a_vcenter_fault_keeps_its_message_and_its_localized_messages() -> None:
    from workloads.vm_ops.vsphere import _error

    # The shape vCenter itself sends (vcsim only sends the Go type as the message).
    fault = vmodl.fault.InvalidArgument(
        msg="A specified parameter was not correct: spec.location.pool",
        invalidProperty="spec.location.pool",
        faultMessage=[vmodl.LocalizableMessage(key="com.vmware.vim.vpxd.vm.noPool",
                                               message="The template has no resource pool.")])
    assert str(_error(fault)) == (
        "vSphere: InvalidArgument: A specified parameter was not correct: spec.location.pool; "
        "The template has no resource pool. (property spec.location.pool)")
    state = vim.fault.InvalidPowerState(msg="", existingState="poweredOn")
    assert str(_error(state)) == "vSphere: InvalidPowerState (state poweredOn)"
    assert str(_error(OSError("connection reset"))) == "vSphere: connection reset"
    assert _error(OSError("connection reset")).retryable


def test_verify_tls_checks_the_certificate_even_on_127_0_0_1(vcsim: VcSim) -> None:
    with pytest.raises(DriverError) as err:
        make_driver(vcsim.settings(verify_tls=True))
    netloc = vcsim.url.split("/")[2]
    assert str(err.value) == (f"vSphere: the certificate of {netloc} is not trusted "
                              "(self-signed certificate); set ca_file to its CA, "
                              "or verify_tls = false")
    assert "<Login" not in vcsim.trace.read_text("utf-8", "replace")  # no password sent
    unchecked = make_driver(vcsim.settings(verify_tls=False))
    unchecked.close()
    assert "<Login" in vcsim.trace.read_text("utf-8", "replace")
    for url in (vcsim.url, vcsim.url.replace("127.0.0.1", "localhost")):
        trusted = make_driver(vcsim.settings(verify_tls=True, ca_file=str(vcsim.cert),
                                             vcenter_url=url))
        try:
            assert trusted.read("DC0_H0_VM0").exists
        finally:
            trusted.close()
