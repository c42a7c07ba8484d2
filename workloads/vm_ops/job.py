"""One slice's view of a vm_ops task: its state, the driver, and calls that heartbeat."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from taskqueue import Task, TaskContext
from workloads.vm_ops.checkpoints import Checkpoint
from workloads.vm_ops.driver import VmDriver
from workloads.vm_ops.ops import Op
from workloads.vm_ops.settings import VmSettings
from workloads.vm_ops.state import VmState

__all__ = ["VmJob"]

T = TypeVar("T")


@dataclass
class VmJob:
    """A claimed task being worked on; `state` is saved with `save()` or with the outcome."""

    task: Task
    ctx: TaskContext
    settings: VmSettings
    driver: VmDriver
    op: Op
    checkpoint: Checkpoint
    state: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.state = dict(self.ctx.state)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a blocking driver call in a thread, heartbeating while it runs."""
        running = asyncio.ensure_future(asyncio.to_thread(fn, *args))
        every = max(0.2, (self.ctx.lease or 30) / 3)
        while True:
            done, _ = await asyncio.wait({running}, timeout=every)
            if done:
                return running.result()
            await self.ctx.heartbeat()

    async def read(self, name: str | None = None) -> VmState:
        return await self.call(self.driver.read, name or self.op.vm)

    async def save(self) -> None:
        """Save the state now, fenced on this claim (LeaseLost if another worker has it)."""
        await self.ctx.save_state(self.state)

    async def stage_event(self, stage: str, **detail: Any) -> None:
        """A `stage` event, so `signoff stats vm_ops` counts the tasks that reached it."""
        await self.ctx.queue.event_insert(self.task.id, "stage", actor=self.ctx.worker,
                                          detail={"stage": stage, **detail})
        self.ctx.log.info("stage %s vm=%s action=%s", stage, self.op.vm, self.op.action)
