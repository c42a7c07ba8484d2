"""`await queue.ask(...)` and `@require_approval(...)` for code outside a worker: the
decision returned, the same key resumed across a restart of the asking process, and a
guarded function run only on an approve and at most once per key."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from taskqueue import Decision, NotSignedOff, TaskQueue, require_approval

from ..ask_helpers import asked, kill
from ..cli_helpers import ROOT
from ..factories import value


async def test_ask_returns_the_decision(queue: TaskQueue) -> None:
    waiting = asyncio.create_task(queue.ask("deploys", "Deploy?", request={"v": 2}, key="a1"))
    found = await asked(queue, "deploys", "a1")
    await queue.approval_decide_for_task(found.id, "revised", "ada", "v3 please")
    got = await asyncio.wait_for(waiting, 30)
    assert (got.decision, got.note, got.status) == (Decision.REVISED, "v3 please", "revised")
    assert (await queue.ask("deploys", "Deploy?", wait=0)).status == "needs_approval"


SCRIPT = textwrap.dedent('''
    import asyncio, os, sys
    from taskqueue import TaskQueue

    async def main():
        async with TaskQueue.connect(os.environ["DATABASE_URL"]) as queue:
            got = await queue.ask("deploys", "Deploy?", key="restart-1")
            print(got.id, got.status, flush=True)

    asyncio.run(main())
''')


async def test_a_restarted_process_resumes_the_same_wait(queue: TaskQueue,
                                                         tmp_path: Path) -> None:
    script = tmp_path / "asker.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "DATABASE_URL": queue.pool.conninfo}

    async def start() -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, str(script), env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE)

    first = await start()
    found = await asked(queue, "deploys", "restart-1")
    kill(first)
    await first.wait()
    second = await start()
    await asyncio.sleep(1)
    await queue.approval_decide_for_task(found.id, "approved", "ada")
    out, _ = await asyncio.wait_for(second.communicate(), 60)
    assert out.decode().split() == [str(found.id), "approved"]
    assert await value(queue, "SELECT count(*) FROM tasks") == 1


async def test_require_approval_runs_only_on_an_approve_and_once_per_key(
        queue: TaskQueue) -> None:
    ran: list[str] = []

    @require_approval(queue, "git", "Push {branch}?", key=lambda branch: f"push:{branch}")
    async def push(branch: str) -> dict[str, str]:
        ran.append(branch)
        return {"pushed": branch}

    calling = asyncio.create_task(push(branch="main"))
    found = await asked(queue, "git", "push:main")
    assert found.approval.question == "Push main?"
    assert found.approval.request["kwargs"] == {"branch": "main"}
    await queue.approval_decide_for_task(found.id, "approved", "ada")
    assert await asyncio.wait_for(calling, 30) == {"pushed": "main"}
    assert ran == ["main"]
    done = await queue.request_get(found.id)
    assert done.result == {"result": {"pushed": "main"}} and done.done_by == "python"
    # Called again with the same key (a restart): the recorded result, not a second run.
    assert await push(branch="main") == {"pushed": "main"}
    assert ran == ["main"]

    calling = asyncio.create_task(push(branch="prod"))
    found = await asked(queue, "git", "push:prod")
    await queue.approval_decide_for_task(found.id, "skipped", "ada")
    with pytest.raises(NotSignedOff, match="skipped"):
        await asyncio.wait_for(calling, 30)
    assert ran == ["main"]
