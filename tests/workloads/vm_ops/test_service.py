"""Through the service: `python -m bot` runs a vm_ops task in its pool; the CLI approves it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from taskqueue import Status, TaskQueue
from tests.taskqueue.worker_helpers import wait_for, wait_status
from workloads.vm_ops.settings import PASSWORD_ENV

from .flow import enqueue
from .stand_ins import PASSWORD, ROOT, VcSim

pytestmark = pytest.mark.slow


def _config(sim: VcSim, folder: Path) -> Path:
    path = folder / "signoff.toml"
    path.write_text(f"""\
[worker]
poll_interval_seconds = 0.2
grace_seconds = 1

[capabilities.vm_ops]
handler = "workloads.vm_ops.handler:handle"
mode = "pool"
max_running = 1
lease_seconds = 30

[workloads.vm_ops]
driver = "vsphere"
vcenter_url = "{sim.url}"
user = "alice"
datacenter = "DC0"
verify_tls = false
allow_names = ["DC0_H0_VM1"]
poll_seconds = 0.05
""", "utf-8")
    return path


def _env(dsn: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1", PASSWORD_ENV: PASSWORD}
    for key in ("SIGNOFF_CONFIG", "TELEGRAM_BOT_TOKEN"):
        env.pop(key, None)
    return env


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()


async def test_the_service_parks_a_vm_change_and_finishes_it_after_a_cli_approve(
        queue: TaskQueue, dsn: str, vcsim: VcSim, tmp_path: Path) -> None:
    out = tmp_path / "service.log"
    with out.open("ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "--config",
                                 str(_config(vcsim, tmp_path))], cwd=ROOT, env=_env(dsn),
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        await wait_for(lambda: _logged(out, "service started"), timeout=30)
        assert (await queue.capability_get("vm_ops")).max_running == 1
        task_id = await enqueue(queue, "DC0_H0_VM1", "snapshot", snapshot="pre-upgrade")
        await wait_status(queue, task_id, Status.NEEDS_APPROVAL, timeout=15)
        assert vcsim.mutations() == []
        approve = await asyncio.to_thread(
            subprocess.run, [str(Path(sys.executable).with_name("signoff")), "approve",
                             str(task_id), "--by", "alice"],
            cwd=ROOT, env=_env(dsn), capture_output=True, text=True, timeout=60)
        assert approve.returncode == 0, approve.stderr
        task = await wait_status(queue, task_id, Status.SUCCEEDED, timeout=15)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, out.read_text()[-2000:]
    assert vcsim.mutations() == ["CreateSnapshot_Task"]
    assert task.result is not None and task.result["verified"]["snapshots"] == ["pre-upgrade"]
    assert task.result["approved_by"] == "alice"
