"""`signoff mcp` driven by the mcp package's own client over stdio: request_approval
answered from the CLI, approval_status, and permission_prompt answered allow, deny (skip)
and revise (the note becomes the message), its evidence the exact command or diff."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from taskqueue import TaskQueue

from ..cli_helpers import ROOT

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402


@asynccontextmanager
async def _session(dsn: str, *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "taskqueue", "mcp", *args], cwd=str(ROOT),
        env={**os.environ, "DATABASE_URL": dsn})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _parked(queue: TaskQueue, n: int = 1) -> list[int]:
    """The ids of the first `n` open requests, once the server has asked them."""
    for _ in range(600):
        found = await queue.approval_list_open()
        if len(found) >= n:
            return [a.task_id for a in found]
        await asyncio.sleep(0.1)
    raise AssertionError("the MCP server asked nothing")


def _text(result: Any) -> str:
    assert not result.is_error, result
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def test_request_approval_answered_from_the_cli(dsn: str, queue: TaskQueue) -> None:
    async with _session(dsn, "--wait", "60") as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == {"request_approval", "approval_status", "permission_prompt"}
        call = asyncio.create_task(session.call_tool("request_approval", {
            "question": "Push to main?", "details": "3 commits", "capability": "git"}))
        [task_id] = await _parked(queue)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "taskqueue", "approve", str(task_id), "--by", "ada",
            env={**os.environ, "DATABASE_URL": dsn}, cwd=ROOT)
        assert await proc.wait() == 0
        answer = json.loads(_text(await asyncio.wait_for(call, 60)))
        assert (answer["id"], answer["status"], answer["decided_by"]) == (task_id, "approved",
                                                                          "ada")
        task = await queue.task_get(task_id)
        assert task.capability == "git" and task.approval is not None
        assert task.approval.request == {"details": "3 commits"}
        status = json.loads(_text(await session.call_tool("approval_status", {"id": task_id})))
        assert status["status"] == "approved"


async def test_request_approval_gives_a_pending_id_past_its_wait(dsn: str,
                                                                  queue: TaskQueue) -> None:
    async with _session(dsn, "--wait", "1") as session:
        answer = json.loads(_text(await session.call_tool("request_approval", {
            "question": "Drop the table?", "details": "prod"})))
        assert answer["status"] == "needs_approval" and "approval_status" in answer["pending"]
        await queue.approval_decide_for_task(answer["id"], "skipped", "ada")
        status = json.loads(_text(await session.call_tool(
            "approval_status", {"id": answer["id"], "wait_seconds": 1})))
        assert (status["status"], status["decided_by"]) == ("skipped", "ada")


@pytest.mark.parametrize(("decision", "note", "answer"), [
    ("approved", None, {"behavior": "allow", "updatedInput": {"command": "git push"}}),
    ("skipped", None, {"behavior": "deny", "message": "skipped by ada"}),
    ("revised", "push to a branch first", {"behavior": "deny",
                                           "message": "push to a branch first"}),
])
async def test_permission_prompt(dsn: str, queue: TaskQueue, decision: str,
                                 note: str | None, answer: dict[str, Any]) -> None:
    async with _session(dsn) as session:
        call = asyncio.create_task(session.call_tool("permission_prompt", {
            "tool_name": "Bash", "input": {"command": "git push"}, "tool_use_id": "t1"}))
        [task_id] = await _parked(queue)
        task = await queue.task_get(task_id)
        assert task.approval is not None and task.approval.question == "Allow Bash?"
        [evidence] = task.approval.attachments
        assert evidence.filename == "command.txt"
        assert (await queue.attachment_get(evidence.id)).data == b"git push"
        await queue.approval_decide_for_task(task_id, decision, "ada", note)
        assert json.loads(_text(await asyncio.wait_for(call, 60))) == answer


async def test_an_edit_is_shown_as_its_diff(dsn: str, queue: TaskQueue) -> None:
    async with _session(dsn) as session:
        call = asyncio.create_task(session.call_tool("permission_prompt", {
            "tool_name": "Edit", "input": {"file_path": "/repo/app.py",
                                           "old_string": "x = 1\n", "new_string": "x = 2\n"}}))
        [task_id] = await _parked(queue)
        approval = (await queue.task_get(task_id)).approval
        assert approval is not None
        [diff] = approval.attachments
        data = (await queue.attachment_get(diff.id)).data or b""
        assert diff.filename == "app.py.diff" and b"-x = 1\n+x = 2\n" in data
        await queue.approval_decide_for_task(task_id, "approved", "ada")
        assert json.loads(_text(await asyncio.wait_for(call, 60)))["behavior"] == "allow"
