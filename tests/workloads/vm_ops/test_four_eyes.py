"""vm_ops with `delete_approvals = 2` against vcsim: a delete waits for a second person; one
approve never reaches the hypervisor."""

from __future__ import annotations

import dataclasses

from taskqueue import Status, TaskQueue
from workloads.vm_ops.drivers import make_driver
from workloads.vm_ops.handler import make_handler
from workloads.vm_ops.settings import SettingsError, build

from .flow import answer, enqueue, tick
from .stand_ins import VcSim

VM = "DC0_H0_VM0"


async def test_a_delete_needs_two_people_when_configured(queue: TaskQueue, vcsim: VcSim) -> None:
    settings = dataclasses.replace(vcsim.settings(), delete_approvals=2)
    outside = make_driver(settings)
    outside.power_off(VM)
    outside.close()
    handler = make_handler(settings)
    task_id = await enqueue(queue, VM, "delete")
    await tick(queue, handler)
    await answer(queue, task_id, "revised", VM)  # the name typed back
    await tick(queue, handler)
    parked = await queue.task_get(task_id)
    assert parked.status is Status.NEEDS_APPROVAL and parked.approval is not None
    assert parked.approval.required == 2
    once = await answer(queue, task_id)  # alice: 1 of 2
    assert once.status is Status.NEEDS_APPROVAL
    assert (await tick(queue, handler)).task_id is None
    assert vcsim.mutations() == ["PowerOffVM_Task"]
    await answer(queue, task_id, by="bob")
    await tick(queue, handler)
    assert (await queue.task_get(task_id)).status is Status.SUCCEEDED
    assert vcsim.mutations() == ["PowerOffVM_Task", "Destroy_Task"]


def test_delete_approvals_is_checked() -> None:
    base = {"driver": "libvirt", "libvirt_uri": "test:///default", "allow_names": ["a"]}
    assert build(base, {}).delete_approvals == 1
    assert build({**base, "delete_approvals": 2}, {}).delete_approvals == 2
    for bad in (0, 11, "2"):
        try:
            build({**base, "delete_approvals": bad}, {})
        except SettingsError as exc:
            assert "delete_approvals" in str(exc)
        else:
            raise AssertionError(f"delete_approvals = {bad!r} was accepted")
