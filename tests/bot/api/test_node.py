"""The API from another language: Node's built-in fetch asks, long-polls, hears a decision
made with the CLI and reports done; and a Node worker loop claims, parks and completes."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from taskqueue import Status
from tests.bot.api.conftest import Api
from tests.taskqueue.ask_helpers import asked
from tests.taskqueue.factories import enqueue

NODE = Path(__file__).parent / "node"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


async def _node(api: Api, token: str, script: str, *args: str
                ) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        "node", str(NODE / script), *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=api.env(SIGNOFF_URL=api.url, SIGNOFF_TOKEN=token))


async def _lines(proc: asyncio.subprocess.Process) -> list[dict[str, object]]:
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


async def test_node_asks_waits_and_reports_done(api: Api) -> None:
    proc = await _node(api, await api.token("node", None, ("ask",)), "ask.mjs")
    found = await asked(api.queue, "deploys", "node-1")
    assert found.approval.request == {"service": "api", "from": "node"}
    await asyncio.sleep(0.5)
    await api.queue.approval_decide_for_task(found.id, "approved", "ada")
    steps = await _lines(proc)
    assert [s["step"] for s in steps] == ["asked", "decided", "done"]
    assert steps[0]["status"] == 201 and steps[1]["body"]["decided_by"] == "ada"  # type: ignore[index]
    assert steps[2]["body"]["done"] is True  # type: ignore[index]
    assert (await api.queue.task_get(found.id)).result == {"deployed": True}


async def test_a_node_worker_loop_claims_parks_and_completes(api: Api) -> None:
    token = await api.token("node-worker", None, ("work",))
    ids = [await enqueue(api.queue, "jobs", payload={"n": n}) for n in (1, 2)]
    steps = await _lines(await _node(api, token, "worker.mjs", "jobs"))
    assert [s["step"] for s in steps] == ["stale", "parked", "stale", "parked", "idle"]
    assert all(s["status"] == 409 and s["body"]["error"] == "lease_lost"  # type: ignore[index]
               for s in steps if s["step"] == "stale")
    for task_id in ids:
        task = await api.queue.task_get(task_id)
        assert task.status is Status.NEEDS_APPROVAL and task.state == {"drafted": True}
        await api.queue.approval_decide_for_task(task_id, "approved", "ada")
    steps = await _lines(await _node(api, token, "worker.mjs", "jobs"))
    assert [s["step"] for s in steps] == ["stale", "completed", "stale", "completed", "idle"]
    for task_id, n in zip(ids, (1, 2), strict=True):
        task = await api.queue.task_get(task_id)
        assert (task.status, task.result) == (Status.SUCCEEDED, {"sent": n})
