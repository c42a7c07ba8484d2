"""THE INVARIANT: no hypervisor call that changes anything before a person's approve of that
exact diff, and at most one act per approve, wherever the worker dies.

In-process, a checkpoint stops the slice for good at every named point (the task is reaped,
as after a crash); as real processes, `signoff worker` kills itself with SIGKILL around the
mutating call and the next worker picks the task up once its short lease has lapsed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from taskqueue import Reaper, Status, TaskQueue
from tests.taskqueue.worker_helpers import events, wait_for
from workloads.vm_ops.checkpoints import CRASH_DIR_ENV, CRASH_ENV, POINTS
from workloads.vm_ops.driver import run_op
from workloads.vm_ops.drivers import make_driver
from workloads.vm_ops.handler import make_handler
from workloads.vm_ops.ops import parse_op
from workloads.vm_ops.settings import PASSWORD_ENV, VmSettings

from .flow import (
    Crasher,
    answer,
    approved_fingerprints,
    assert_invariant,
    enqueue,
    run_to_the_end,
)
from .stand_ins import PASSWORD, ROOT, CountingLibvirt, VcSim, VmDriverFactory

pytestmark = pytest.mark.slow


def _target(request: pytest.FixtureRequest, driver: str
            ) -> tuple[VmSettings, VmDriverFactory | None, str, Callable[[], list[str]]]:
    if driver == "vsphere":
        sim: VcSim = request.getfixturevalue("vcsim")
        return sim.settings(), None, "DC0_H0_VM0", sim.mutations
    lv: CountingLibvirt = request.getfixturevalue("libvirt_host")
    return lv.settings(), lv, "lab-web", lv.mutations


@pytest.mark.parametrize("driver", ["vsphere", "libvirt"])
async def test_a_worker_dying_at_every_point_acts_once_and_only_after_approve(
        queue: TaskQueue, request: pytest.FixtureRequest, driver: str) -> None:
    settings, factory, vm, mutations = _target(request, driver)
    crasher = Crasher(list(POINTS))
    handler = make_handler(settings, checkpoint=crasher,
                           **({"driver_factory": factory} if factory else {}))
    task_id = await enqueue(queue, vm, "power_off")
    task = await run_to_the_end(queue, handler, task_id, mutations, crasher)
    assert crasher.fired == list(POINTS)
    assert task.status == Status.SUCCEEDED, task.last_error
    assert await assert_invariant(queue, task_id, mutations) == 1
    # Died after saving the marker and before the call: asked again (2 approves), acted once.
    assert len(await approved_fingerprints(queue, task_id)) == 2
    reasons = [a.request.get("reason", "") for a in (await queue.task_detail(task_id)).approvals]
    assert "does not show its result" in reasons[1] and "may already" not in reasons[1]
    assert task.result is not None and task.result["recovered"] is True
    assert task.result["verified"]["power"] == "off"


async def test_a_reboot_that_cannot_be_proven_is_asked_about_not_repeated(
        queue: TaskQueue, vcsim: VcSim) -> None:
    # vcsim reports no boot time, so after a crash nothing proves that the reset happened.
    crasher = Crasher(["act.issued"])
    handler = make_handler(vcsim.settings(), checkpoint=crasher)
    task_id = await enqueue(queue, "DC0_H0_VM0", "reboot")
    task = await run_to_the_end(queue, handler, task_id, vcsim.mutations, crasher)
    assert task.status == Status.SUCCEEDED
    assert vcsim.mutations() == ["ResetVM_Task", "ResetVM_Task"]
    detail = await queue.task_detail(task_id)
    reasons = [a.request.get("reason", "") for a in detail.approvals]
    assert len(reasons) == 2 and "it may already have happened" in reasons[1]


async def test_a_revert_to_the_current_snapshot_that_cannot_be_proven_is_asked_about(
        queue: TaskQueue, vcsim: VcSim) -> None:
    # Reverting to the snapshot the VM already stands on leaves nothing to read back, so a
    # crash after the call is asked about with the same words as a reboot.
    settings = vcsim.settings()
    outside = make_driver(settings)
    try:
        run_op(outside, parse_op({"vm": "DC0_H0_VM0", "action": "snapshot",
                                  "snapshot": "current"}, settings))
    finally:
        outside.close()
    before = vcsim.mutations()
    crasher = Crasher(["act.issued"])
    handler = make_handler(settings, checkpoint=crasher)
    task_id = await enqueue(queue, "DC0_H0_VM0", "revert", snapshot="current")
    since = len(before)
    task = await run_to_the_end(queue, handler, task_id, lambda: vcsim.mutations()[since:],
                                crasher)
    assert task.status == Status.SUCCEEDED
    assert vcsim.mutations()[since:] == ["RevertToSnapshot_Task"] * 2
    detail = await queue.task_detail(task_id)
    reasons = [a.request.get("reason", "") for a in detail.approvals]
    assert len(reasons) == 2 and "it may already have happened" in reasons[1]


def _config(sim: VcSim, folder: Path) -> Path:
    path = folder / "signoff.toml"
    path.write_text(
        "[workloads.vm_ops]\n"
        f'driver = "vsphere"\nvcenter_url = "{sim.url}"\nuser = "alice"\n'
        'datacenter = "DC0"\nverify_tls = false\nallow_patterns = ["DC0_*"]\n'
        "poll_seconds = 0.05\n", "utf-8")
    return path


def _spawn_worker(dsn: str, config: Path, crash_dir: Path, name: str,
                  log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": dsn, "SIGNOFF_CONFIG": str(config),
           PASSWORD_ENV: PASSWORD, CRASH_ENV: "act.marked,act.issued",
           CRASH_DIR_ENV: str(crash_dir), "PYTHONUNBUFFERED": "1"}
    signoff = Path(sys.executable).with_name("signoff")
    cmd = [str(signoff), "worker", "--capability", "vm_ops", "--handler",
           "workloads.vm_ops.handler:handle", "--lease", "2", "--poll-interval", "0.2",
           "--name", name]
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


async def _killed(proc: subprocess.Popen[bytes]) -> int:
    return int(await asyncio.wait_for(asyncio.to_thread(proc.wait), 20))


async def _parked(queue: TaskQueue, task_id: int) -> bool:
    return (await queue.task_get(task_id)).status == Status.NEEDS_APPROVAL


async def _reaped(reaper: Reaper) -> bool:
    return (await reaper.run_once()).requeued > 0


async def test_kill_9_of_signoff_worker_around_the_call_recovers_and_acts_once(
        queue: TaskQueue, dsn: str, vcsim: VcSim, tmp_path: Path) -> None:
    config, crash_dir, log = _config(vcsim, tmp_path), tmp_path / "crashed", tmp_path / "w.log"
    crash_dir.mkdir()
    task_id = await enqueue(queue, "DC0_H0_VM0", "resize", cpus=4)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for name in ("first", "second"):  # killed before the call, then right after it
            procs.append(_spawn_worker(dsn, config, crash_dir, name, log))
            if name == "second":
                await wait_for(lambda: _reaped(Reaper(queue)), timeout=15, every=0.2)
            await wait_for(lambda: _parked(queue, task_id), timeout=20)
            await assert_invariant(queue, task_id, vcsim.mutations)
            await answer(queue, task_id)
            assert await _killed(procs[-1]) == -signal.SIGKILL, log.read_text()[-2000:]
            await assert_invariant(queue, task_id, vcsim.mutations)
        assert vcsim.mutations() == ["ReconfigVM_Task"]
        procs.append(_spawn_worker(dsn, config, crash_dir, "third", log))
        await wait_for(lambda: _reaped(Reaper(queue)), timeout=15, every=0.2)
        await wait_for(lambda: _done(queue, task_id), timeout=20)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(15)
    assert sorted(p.name for p in crash_dir.iterdir()) == ["act.issued", "act.marked"]
    assert vcsim.mutations() == ["ReconfigVM_Task"]
    assert await assert_invariant(queue, task_id, vcsim.mutations) == 1
    task = await queue.task_get(task_id)
    assert task.result is not None and task.result["recovered"] is True
    assert len(await events(queue, task_id, "completed")) == 1
    claimed = [e.actor for e in await events(queue, task_id, "claimed")]
    assert claimed[-1] == "third" and {"first", "second"} <= set(claimed)


async def _done(queue: TaskQueue, task_id: int) -> bool:
    return (await queue.task_get(task_id)).status == Status.SUCCEEDED
