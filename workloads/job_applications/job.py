"""One slice's view of a job-application task: its state, the runtime pieces, small helpers."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskqueue import Release, Task, TaskContext
from workloads.job_applications.applicant import FormFiles
from workloads.job_applications.artifacts import ArtifactStore
from workloads.job_applications.boards import Posting
from workloads.job_applications.checkpoints import Checkpoint, env_checkpoint
from workloads.job_applications.codec import posting_from_json
from workloads.job_applications.profile import Profile
from workloads.job_applications.settings import JobSettings

if TYPE_CHECKING:
    from playwright.async_api import Browser  # loaded by the browser stages, not at start

__all__ = ["Job", "Runtime", "file_names"]


@dataclass(frozen=True)
class Runtime:
    """What every slice needs besides its task: settings, profile, files, browser, hooks."""

    settings: JobSettings
    profile: Profile
    store: ArtifactStore
    browser: Browser | None = None  # None: each browser stage launches its own Chromium
    checkpoint: Checkpoint = env_checkpoint


def file_names(profile: Profile) -> tuple[str, str]:
    """The upload names of the CV and the letter (part of the form's fingerprint)."""
    base = re.sub(r"[^A-Za-z0-9]+", "_", profile.contact.name).strip("_") or "Applicant"
    return f"{base}_CV.pdf", f"{base}_Cover_Letter.pdf"


@dataclass
class Job:
    """A claimed task being worked on: `state` is saved with `save()` or the outcome."""

    task: Task
    ctx: TaskContext
    rt: Runtime
    state: dict[str, Any] = field(init=False)
    posting: Posting = field(init=False)

    def __post_init__(self) -> None:
        self.state = dict(self.ctx.state)
        self.posting = posting_from_json(self.task.payload["posting"])

    @property
    def company(self) -> str:
        return self.posting.company

    @property
    def role(self) -> str:
        return self.posting.title

    async def save(self) -> None:
        """Save the state now, fenced on this claim (LeaseLost if another worker has it)."""
        await self.ctx.save_state(self.state)

    async def checkpoint(self, name: str) -> None:
        await self.rt.checkpoint(name)

    async def stage_event(self, stage: str, **detail: Any) -> None:
        """A `stage` event, so `signoff stats` can count the tasks that reached it."""
        await self.ctx.queue.event_insert(self.task.id, "stage", actor=self.ctx.worker,
                                          detail={"stage": stage, **detail})
        self.ctx.log.info("stage %s", stage)

    def release(self) -> Release:
        """Continue on the next tick with the current state."""
        return Release(dict(self.state))

    @contextmanager
    def files(self, cv: bytes, letter: bytes) -> Iterator[FormFiles]:
        """The PDFs as files with stable names, for the browser's upload fields."""
        cv_name, letter_name = file_names(self.rt.profile)
        with tempfile.TemporaryDirectory(prefix="signoff-apply-") as folder:
            cv_path, letter_path = Path(folder) / cv_name, Path(folder) / letter_name
            cv_path.write_bytes(cv)
            letter_path.write_bytes(letter)
            yield FormFiles(cv_path, letter_path)
