"""One slice's view of a build task, and the publisher interface each platform fills in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from taskqueue import LeaseLost, Release, Task, TaskContext, TaskNotFound
from workloads.builds.checkpoints import Checkpoint, env_checkpoint
from workloads.builds.git import Source, source_from_payload
from workloads.builds.settings import BuildSettings
from workloads.builds.store import Artifact, ArtifactStore

__all__ = ["BuildJob", "PublishError", "Publisher"]


class PublishError(Exception):
    """A publish that did not succeed. `sent` False: certainly nothing was published (the
    server answered an error, or no connection was made); True: it may have been."""

    def __init__(self, message: str, *, retryable: bool, sent: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable, self.sent, self.retry_after = retryable, sent, retry_after


class Publisher(Protocol):
    """Where a platform's approved artifact goes (TestFlight, a Roblox place)."""

    platform: str
    suffixes: tuple[str, ...]

    def target(self, settings: BuildSettings) -> str:
        """Where the artifact will go, for the person deciding."""
        ...

    async def prepare(self, job: BuildJob, artifact: Artifact) -> tuple[str, Any]:
        """Load what will be sent: (its sha256 as read now, the payload for `send`)."""
        ...

    async def send(self, job: BuildJob, artifact: Artifact, payload: Any) -> dict[str, Any]:
        """Publish once; the result to record, or PublishError."""
        ...


@dataclass
class BuildJob:
    """A claimed build task: `state` is saved with `save()` or with the outcome."""

    task: Task
    ctx: TaskContext
    settings: BuildSettings
    publisher: Publisher
    checkpoint: Checkpoint = env_checkpoint
    state: dict[str, Any] = field(init=False)
    source: Source = field(init=False)

    def __post_init__(self) -> None:
        self.state = dict(self.ctx.state)
        self.source = source_from_payload(self.task.payload)

    @property
    def store(self) -> ArtifactStore:
        return ArtifactStore(self.settings.store)

    @property
    def folder(self) -> Path:
        """This task's scratch folder: the checkout, the output folder and the build log."""
        return self.settings.work_dir / f"{self.task.capability}-{self.task.id}"

    async def heartbeat(self) -> None:
        """Extend the lease while a command runs. A lost lease raises (the command is
        killed); a database that is away does not: the runtime's heartbeat keeps trying."""
        try:
            await self.ctx.heartbeat()
        except (LeaseLost, TaskNotFound):
            raise
        except Exception as exc:
            self.ctx.log.warning("heartbeat failed, the build goes on: %s", exc)

    @property
    def beat_every(self) -> float:
        """How often a running command heartbeats: a third of the lease."""
        return max((self.ctx.lease or 30.0) / 3, 0.5)

    async def save(self) -> None:
        """Save the state now, fenced on this claim (LeaseLost if another worker has it)."""
        await self.ctx.save_state(self.state)

    async def stage_event(self, stage: str, **detail: Any) -> None:
        """A `stage` event, so `signoff stats` counts the tasks that reached it."""
        await self.ctx.queue.event_insert(self.task.id, "stage", actor=self.ctx.worker,
                                          detail={"stage": stage, **detail})
        self.ctx.log.info("stage %s", stage)

    def release(self, delay: float = 0) -> Release:
        return Release(dict(self.state), delay)
