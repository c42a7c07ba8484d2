"""One slice's view of a code-change task: its payload, state, workspace and small helpers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskqueue import CommandResult, Release, Task, TaskContext
from workloads.code_changes.marked import run_marked
from workloads.code_changes.payload import Payload
from workloads.code_changes.sandbox import agent_env, sandboxed
from workloads.code_changes.settings import CodeSettings, render_command
from workloads.code_changes.workspace import Workspace

__all__ = ["POINTS", "Change", "Checkpoint", "no_checkpoint"]

Checkpoint = Callable[[str], Awaitable[None]]
# Where a test's checkpoint may stop the worker, in the order a task passes them.
POINTS = (
    "work.agent_done",  # the agent finished, nothing committed
    "work.committed",  # committed, the state not saved
    "park.middle",  # the request built, the park not applied
    "push.marked",  # push_started saved, not pushed
    "push.pushed",  # pushed, not recorded
    "pr.opened",  # the pull request opened, not recorded
    "done.before",  # all recorded, the worktree not yet removed
)


async def no_checkpoint(name: str) -> None:
    """Production's checkpoint: nothing (tests pass one that stops the worker there)."""


@dataclass
class Change:
    """A claimed task being worked on; `state` is saved with `save()` or with the outcome."""

    task: Task
    ctx: TaskContext
    settings: CodeSettings
    payload: Payload
    checkpoint: Checkpoint = no_checkpoint
    state: dict[str, Any] = field(init=False)
    ws: Workspace = field(init=False)

    def __post_init__(self) -> None:
        self.state = dict(self.ctx.state)
        self.ws = Workspace(self.settings.workspace, self.settings.branch_prefix,
                            self.settings.git_timeout)

    @property
    def branch(self) -> str:
        return self.ws.branch(self.task.id)

    @property
    def worktree(self) -> Path:
        return self.ws.worktree(self.task.id)

    @property
    def mirror(self) -> Path:
        return self.ws.mirror(self.payload.repo)

    async def save(self) -> None:
        """Save the state now, fenced on this claim (LeaseLost if another worker has it)."""
        await self.ctx.save_state(self.state)

    async def stage_event(self, stage: str, **detail: Any) -> None:
        """A `stage` event, so `signoff stats code_changes` counts the tasks that reached it."""
        await self.ctx.queue.event_insert(self.task.id, "stage", actor=self.ctx.worker,
                                          detail={"stage": stage, **detail})
        self.ctx.log.info("stage %s", stage)

    def release(self) -> Release:
        return Release(dict(self.state))

    def instruction(self) -> str:
        """The payload's instruction followed by every revise note so far."""
        notes = self.state.get("notes", [])
        parts = [self.payload.instruction]
        parts += [f"\n\nRevision request {i} from the reviewer:\n{note}"
                  for i, note in enumerate(notes, 1)]
        return "".join(parts)

    async def run(self, template: tuple[str, ...], name: str, timeout: float) -> CommandResult:
        """Run a configured command template in the worktree, logged under the run folder:
        in the sandbox (unless `sandbox = false`), with the allow-listed environment only;
        the agent and the tests run code the person has not reviewed yet."""
        run_dir = self.ws.run_dir(self.task.id)
        instruction_file = run_dir / "instruction.txt"
        instruction = self.instruction()
        instruction_file.write_text(instruction, "utf-8")
        argv = render_command(template, {
            "instruction": instruction, "instruction_file": str(instruction_file),
            "worktree": str(self.worktree), "task_id": str(self.task.id),
            "branch": self.branch})
        if self.settings.sandbox:
            argv = sandboxed(self.settings, argv, worktree=self.worktree, run_dir=run_dir)
        env = agent_env(self.settings)
        lease = self.ctx.lease or 30.0
        return await run_marked(
            argv, cwd=self.worktree, log=run_dir / f"{name}.log", timeout=timeout, env=env,
            mark=self.ws.mark(self.task.id), tail_bytes=self.settings.output_tail_bytes,
            max_log_bytes=self.settings.log_max_bytes, heartbeat=self.ctx.heartbeat,
            heartbeat_every=max(1.0, lease / 3), cancelled=self.ctx.cancelled)
