"""Both drivers against their real simulators: each operation ends as its plan said."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

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
