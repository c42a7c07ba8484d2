"""The handler end to end through the queue against vcsim: park the diff, act after approve."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from taskqueue import Status, TaskQueue
from workloads.vm_ops.drivers import make_driver
from workloads.vm_ops.handler import make_handler

from .flow import answer, enqueue, tick
from .stand_ins import ROOT, VcSim

VM = "DC0_H0_VM0"


async def _parked(queue: TaskQueue, task_id: int) -> dict[str, Any]:
    task = await queue.task_get(task_id)
    assert task.status == Status.NEEDS_APPROVAL, (task.status, task.last_error)
    assert task.approval is not None
    return task.approval.request


def squeeze(diff: str) -> str:
    """The diff with the column padding removed: `+ cpus: 2`."""
    return re.sub(r":\s+", ": ", diff)


def _stats(dsn: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "taskqueue", "stats", "vm_ops", "--json"],
                         cwd=ROOT, env={**os.environ, "DATABASE_URL": dsn}, capture_output=True,
                         text=True, timeout=60, check=True)
    return dict(json.loads(out.stdout))


async def test_a_resize_parks_its_diff_and_acts_only_after_the_approve(
        queue: TaskQueue, dsn: str, vcsim: VcSim) -> None:
    handler = make_handler(vcsim.settings())
    task_id = await enqueue(queue, VM, "resize", cpus=2, memory_mb=64, reason="more room")
    await tick(queue, handler)
    request = await _parked(queue, task_id)
    assert request["kind"] == "vm_change" and request["vm"] == VM
    assert request["host"] == "127.0.0.1/DC0" and request["reason"] == "more room"
    for line in ("- cpus: 1", "+ cpus: 2", "+ memory (MB): 64", "  power: on"):
        assert line in squeeze(request["diff"]), request["diff"]
    assert (await tick(queue, handler)).task_id is None  # parked: nothing to claim
    assert vcsim.mutations() == []
    await answer(queue, task_id)
    await tick(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED, task.last_error
    assert vcsim.mutations() == ["ReconfigVM_Task"]
    assert task.result is not None and task.result["approved_by"] == "alice"
    assert task.result["fingerprint"] == request["fingerprint"]
    assert (task.result["verified"]["cpus"], task.result["verified"]["memory_mb"]) == (2, 64)
    stats = _stats(dsn)
    assert stats["by_status"] == {"succeeded": 1}
    assert {"parked", "acting", "completed"} <= set(stats["stages"])


async def test_a_vm_changed_after_the_approve_is_asked_about_again(
        queue: TaskQueue, vcsim: VcSim) -> None:
    settings = vcsim.settings()
    handler = make_handler(settings)
    task_id = await enqueue(queue, VM, "resize", cpus=2)
    await tick(queue, handler)
    first = await _parked(queue, task_id)
    outside = make_driver(settings)
    outside.resize(VM, None, 128)  # someone else, in between
    outside.close()
    await answer(queue, task_id)
    await tick(queue, handler)
    second = await _parked(queue, task_id)
    assert vcsim.mutations() == ["ReconfigVM_Task"]  # only the outside change
    assert second["fingerprint"] != first["fingerprint"]
    assert "changed since your approve" in second["reason"]
    assert "  memory (MB): 128" in squeeze(second["diff"])
    await answer(queue, task_id)
    await tick(queue, handler)
    assert (await queue.task_get(task_id)).status == Status.SUCCEEDED
    assert vcsim.mutations() == ["ReconfigVM_Task", "ReconfigVM_Task"]


async def test_a_revise_note_adjusts_the_change_and_asks_again(
        queue: TaskQueue, vcsim: VcSim) -> None:
    handler = make_handler(vcsim.settings(max_cpus=8))
    task_id = await enqueue(queue, VM, "resize", cpus=2)
    await tick(queue, handler)
    await answer(queue, task_id, "revised", "cpus: 99")
    await tick(queue, handler)
    request = await _parked(queue, task_id)
    assert "not applied: cpus must be a whole number from 1 to 8" in request["reason"]
    assert "+ cpus: 2" in squeeze(request["diff"])
    await answer(queue, task_id, "revised", "cpus: 4\nmemory_mb=256")
    await tick(queue, handler)
    request = await _parked(queue, task_id)
    assert "adjusted as you asked: cpus=4, memory_mb=256" in request["reason"]
    assert "+ cpus: 4" in squeeze(request["diff"])
    assert "+ memory (MB): 256" in squeeze(request["diff"])
    assert vcsim.mutations() == []
    await answer(queue, task_id)
    await tick(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED
    assert task.result is not None and task.result["verified"]["cpus"] == 4


async def test_a_delete_happens_only_after_the_name_is_typed_back_and_approved(
        queue: TaskQueue, vcsim: VcSim) -> None:
    settings = vcsim.settings()
    outside = make_driver(settings)
    outside.power_off(VM)
    outside.close()
    handler = make_handler(settings)
    task_id = await enqueue(queue, VM, "delete")
    await tick(queue, handler)
    first = await _parked(queue, task_id)
    assert "+ exists: no" in squeeze(first["diff"])
    assert f"Revise with the VM's name ({VM})" in first["how_to_revise"]
    await answer(queue, task_id)  # an approve without the typed name deletes nothing
    await tick(queue, handler)
    assert "type DC0_H0_VM0 in a Revise note first" in (await _parked(queue, task_id))["reason"]
    await answer(queue, task_id, "revised", "DC0_H0_VM")  # not the exact name
    await tick(queue, handler)
    assert "nothing is confirmed" in (await _parked(queue, task_id))["reason"]
    await answer(queue, task_id, "revised", f"  {VM} ")
    await tick(queue, handler)
    confirmed = await _parked(queue, task_id)
    assert "typed back: approve to delete it" in confirmed["reason"]
    assert vcsim.mutations() == ["PowerOffVM_Task"]
    await answer(queue, task_id)
    await tick(queue, handler)
    assert (await queue.task_get(task_id)).status == Status.SUCCEEDED
    assert vcsim.mutations() == ["PowerOffVM_Task", "Destroy_Task"]


@pytest.mark.parametrize(("payload", "settings", "error"), [
    ({"vm": VM, "action": "format"}, {}, "action must be one of clone, power_on"),
    ({"vm": "bad name;rm", "action": "power_on"}, {}, "vm must be 1-63 letters"),
    ({"vm": "x" * 64, "action": "power_on"}, {}, "vm must be 1-63 letters"),
    ({"vm": VM, "action": "resize", "cpus": 0}, {}, "cpus must be a whole number from 1"),
    ({"vm": VM, "action": "resize", "memory_mb": 1001}, {}, "multiple of 4"),
    ({"vm": VM, "action": "resize", "memory_mb": 10 ** 9}, {}, "memory_mb must be"),
    ({"vm": VM, "action": "power_on", "cpus": 2}, {}, "power_on takes no cpus"),
    ({"vm": VM, "action": "delete"}, {"allow_delete": False}, "allow_delete = false"),
    ({"vm": VM, "action": "power_off"}, {"allow_patterns": ("web-*",)},
     "not in the allow list"),
    ({"vm": "web-9", "action": "clone", "template": VM}, {"allow_patterns": (),
                                                          "allow_folders": ("lab",)},
     "not in the allow list"),
    ({"vm": "web-9", "action": "power_on"}, {}, "there is no VM named web-9"),
    ({"vm": VM, "action": "delete"}, {}, "power it off first"),
])
async def test_refusals_end_the_task_before_any_question(
        queue: TaskQueue, vcsim: VcSim, payload: dict[str, Any], settings: dict[str, Any],
        error: str) -> None:
    handler = make_handler(vcsim.settings(**settings))
    task_id = (await queue.task_enqueue("vm_ops", payload)).id
    await tick(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and task.attempts == 1
    assert error in (task.last_error or "") and "\n" not in (task.last_error or "")
    assert (await queue.task_detail(task_id)).approvals == ()
    assert vcsim.mutations() == []


async def test_nothing_to_change_completes_without_asking(
        queue: TaskQueue, vcsim: VcSim) -> None:
    handler = make_handler(vcsim.settings())
    task_id = await enqueue(queue, VM, "power_on")  # vcsim's VMs run already
    await tick(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED
    assert task.result is not None and task.result["status"] == "no_change"
    assert (await queue.task_detail(task_id)).approvals == ()


@pytest.mark.parametrize("marked", [False, True], ids=["plain-vm", "marked-template"])
async def test_a_clone_from_a_template_is_created_after_the_approve(
        queue: TaskQueue, vcsim: VcSim, marked: bool) -> None:
    settings = vcsim.settings()
    if marked:  # a VM marked as template has no resource pool of its own
        setup = make_driver(settings)
        setup.power_off("DC0_H0_VM1")
        setup._vm("DC0_H0_VM1").MarkAsTemplate()  # type: ignore[attr-defined]
        setup.close()
    before = len(vcsim.mutations())
    handler = make_handler(settings)
    task_id = await enqueue(queue, "web-01", "clone", template="DC0_H0_VM1")
    await tick(queue, handler)
    request = await _parked(queue, task_id)
    assert "- exists: no\n+ exists: yes" in squeeze(request["diff"])
    await answer(queue, task_id)
    await tick(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED, task.last_error
    assert vcsim.mutations()[before:] == ["CloneVM_Task"]
    assert task.result is not None and task.result["verified"]["power"] == "off"
