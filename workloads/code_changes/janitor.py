"""The janitor: removes the worktrees and local branches of finished code-change tasks.

Skip, expiry and cancel end a task inside the queue without its handler running, so nothing
else cleans up after them. Run it on a cron as a producer of the capability:

    [[capabilities.code_changes.producers]]
    name = "janitor"
    function = "workloads.code_changes.janitor:janitor"
    cron = "17 * * * *"
    period = "hour"

It only reads the queue (`task_get`) and never enqueues anything. A task that is still
unfinished (pending, running, waiting for a person, approved) is left alone; so is anything
in the workspace that does not name a task of this capability.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from taskqueue import ProducerContext, Status, TaskNotFound
from taskqueue.queues.producer import ProducerQueue
from workloads.code_changes.git import GitError, git
from workloads.code_changes.settings import CodeSettings, load_settings
from workloads.code_changes.workspace import Workspace

__all__ = ["FINISHED", "JanitorReport", "janitor", "run_janitor"]

FINISHED = frozenset({Status.SUCCEEDED, Status.FAILED, Status.SKIPPED, Status.EXPIRED,
                      Status.CANCELLED})
_WORKTREE = re.compile(r"^task-(\d{1,18})$")


@dataclass
class JanitorReport:
    """What one run removed (task ids)."""

    worktrees: list[int] = field(default_factory=list)
    branches: list[int] = field(default_factory=list)


async def janitor(queue: ProducerQueue, ctx: ProducerContext) -> JanitorReport:
    """The producer entry point: clean up after the finished tasks of `ctx.capability`."""
    report = await run_janitor(queue, load_settings(), ctx.capability)
    ctx.log.info("janitor removed worktrees=%s branches=%s", report.worktrees, report.branches)
    return report


async def _finished(queue: ProducerQueue, task_id: int, capability: str,
                    seen: dict[int, bool]) -> bool:
    if task_id not in seen:
        try:
            task = await queue.task_get(task_id)
            seen[task_id] = task.capability == capability and task.status in FINISHED
        except TaskNotFound:
            seen[task_id] = False  # not ours to judge (another database, or deleted)
    return seen[task_id]


async def run_janitor(queue: ProducerQueue, settings: CodeSettings,
                      capability: str = "code_changes") -> JanitorReport:
    """One pass over the workspace; returns what was removed."""
    ws = Workspace(settings.workspace, settings.branch_prefix, settings.git_timeout)
    report = JanitorReport()
    seen: dict[int, bool] = {}
    for mirror in ws.mirrors():
        for task_id in await _worktree_tasks(mirror, ws):
            if await _finished(queue, task_id, capability, seen):
                await ws.remove_worktree(mirror, task_id)
                report.worktrees.append(task_id)
        for task_id in await _branch_tasks(mirror, ws):
            if await _finished(queue, task_id, capability, seen) \
                    and await ws.delete_branch(mirror, task_id):
                report.branches.append(task_id)
    folder = ws.root / "worktrees"
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        match = _WORKTREE.match(path.name)
        if match and await _finished(queue, int(match[1]), capability, seen):
            shutil.rmtree(path, ignore_errors=True)  # a folder no mirror knows any more
            if int(match[1]) not in report.worktrees:
                report.worktrees.append(int(match[1]))
    return report


async def _worktree_tasks(mirror: Path, ws: Workspace) -> list[int]:
    try:
        out = await git("worktree", "list", "--porcelain", cwd=mirror)
    except GitError:
        return []
    found = []
    for line in out.splitlines():
        path = Path(line.removeprefix("worktree ")) if line.startswith("worktree ") else None
        if path is not None and path.parent == (ws.root / "worktrees").resolve() \
                and (match := _WORKTREE.match(path.name)):
            found.append(int(match[1]))
    return found


async def _branch_tasks(mirror: Path, ws: Workspace) -> list[int]:
    try:
        out = await git("for-each-ref", "--format=%(refname:strip=2)",
                        f"refs/heads/{ws.branch_prefix}*", cwd=mirror)
    except GitError:
        return []
    ids = [name.removeprefix(ws.branch_prefix) for name in out.splitlines()]
    return [int(i) for i in ids if i.isdigit() and len(i) <= 18]
