"""A parked code change renders through the bot's template: diffstat visible and escaped."""

from __future__ import annotations

from pathlib import Path

from bot.telegram.render import render_approval
from taskqueue import CapabilityRun, TaskQueue
from tests.taskqueue.worker_helpers import running_pool, wait_status
from workloads.code_changes.handler import CAPABILITY, make_handler
from workloads.code_changes.settings import CodeSettings

from .conftest import Remote, payload, with_agent

ODD_NAME = """
import pathlib
pathlib.Path("a<b>&c.txt").write_text("odd\\n")
"""


async def test_the_request_renders_with_the_diffstat_escaped(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "odd", ODD_NAME, test_command=())
    task_id = (await queue.task_enqueue(
        CAPABILITY, payload(remote, title="Fix <script>alert(1)</script>"))).id
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        task = await wait_status(queue, task_id, "needs_approval", timeout=15)
    assert task.approval is not None
    assert task.approval.request["tests"]["ran"] is False
    text = render_approval(task.approval, CAPABILITY).text
    assert "<b>Code change</b>" in text
    assert f"signoff/task-{task_id}" in text
    assert "a&lt;b&gt;&amp;c.txt | 1 +" in text  # the diffstat row, escaped
    assert "<pre>" in text and "1 file changed, 1 insertion(+)" in text
    assert "&lt;script&gt;" in text and "<script>" not in text
    assert "a<b>" not in text
    assert "Tests: not run" in text and task.approval.request["commit"][:12] in text
