"""The gated handler in docs/semantics.md runs as written: against a real database and a
message server that counts its calls, it sends once on an approve, and after a crash it asks
the server (its `verify`) instead of sending again."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import re
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import pytest

from taskqueue import CapabilityRun, Reaper, Status, TaskQueue, Tick, TickReport
from tests.far_side import FarSide, running_far_side

DOC = (Path(__file__).resolve().parents[3] / "docs" / "semantics.md").read_text("utf-8")
CAP = "notify"


def _example(tmp_path: Path) -> ModuleType:
    [code] = [b for b in re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
              if b.startswith("# docs/example: mywork/notify.py")]
    path = tmp_path / "notify.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location("docs_notify_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
async def far(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FarSide]:
    async with running_far_side() as fake:
        monkeypatch.setenv("MESSAGES_API", fake.url)
        yield fake


async def _tick(queue: TaskQueue, module: ModuleType) -> TickReport:
    return await Tick(queue, CapabilityRun(CAP, module.notify, lease=30), "w1").run_once()


async def _approved(queue: TaskQueue, module: ModuleType, text: str) -> int:
    task_id = (await queue.task_enqueue(CAP, {"text": text}, max_attempts=10)).id
    assert (await _tick(queue, module)).outcome == "parked"
    await queue.approval_decide_for_task(task_id, "approved", "alice")
    return task_id


async def _sql(queue: TaskQueue, statement: str) -> None:
    async with queue.pool.connection() as conn:
        await conn.execute(statement)  # type: ignore[arg-type]


async def test_the_documented_handler_sends_once_on_an_approve(
        queue: TaskQueue, far: FarSide, tmp_path: Path) -> None:
    module = _example(tmp_path)
    task_id = await _approved(queue, module, "Your order shipped.")
    assert far.requests == 0  # nothing before the approve
    assert (await _tick(queue, module)).outcome == "done"
    task = await queue.task_get(task_id)
    assert task.result == {"message": {"id": 1}, "sent_now": True}
    assert far.requests == 1 and far.delivered == [{"text": "Your order shipped."}]


async def test_after_a_crash_mid_send_it_asks_the_server_instead_of_sending_again(
        queue: TaskQueue, far: FarSide, tmp_path: Path) -> None:
    module = _example(tmp_path)
    task_id = await _approved(queue, module, "Your order shipped.")
    far.hold = asyncio.Event()  # delivered, but the answer never comes: the worker dies
    dying = asyncio.create_task(_tick(queue, module))
    while not far.delivered:
        await asyncio.sleep(0.05)
    dying.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await dying
    far.hold.set()
    await _sql(queue, "UPDATE tasks SET lease_expires_at = now() - interval '1 second'")
    assert (await Reaper(queue).run_once()).requeued == 1
    assert (await _tick(queue, module)).outcome == "done"
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED and task.result == {"message": None,
                                                               "sent_now": False}
    assert far.requests == 1 and len(far.delivered) == 1


async def test_a_send_that_failed_on_the_server_is_found_missing_and_sent_once(
        queue: TaskQueue, far: FarSide, tmp_path: Path) -> None:
    module = _example(tmp_path)
    task_id = await _approved(queue, module, "Your order shipped.")
    far.script = [503]  # maybe sent, as far as the worker knows
    assert (await _tick(queue, module)).outcome == "error"
    await _sql(queue, "UPDATE tasks SET run_after = now()")
    assert (await _tick(queue, module)).outcome == "done"
    assert far.requests == 2 and len(far.delivered) == 1
    assert (await queue.task_get(task_id)).result == {"message": {"id": 1}, "sent_now": True}
