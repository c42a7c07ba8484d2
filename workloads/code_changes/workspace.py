"""The workspace folder: one bare mirror per repository, one worktree and one run folder
(instruction, logs, the marker of a running agent) per task.

    WORKSPACE/mirrors/<hash>.git   a bare clone; its `origin` is the task's repository
    WORKSPACE/worktrees/task-<id>  the task's checkout, on branch <prefix><id>
    WORKSPACE/runs/task-<id>/      instruction.txt, agent-<n>.log, test-<n>.log, patch
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from workloads.code_changes.git import GitError, git
from workloads.code_changes.marked import kill_marked

__all__ = ["PUSH_DISABLED", "Workspace"]

PUSH_DISABLED = "/dev/null/signoff-pushes-only-approved-commits"


@dataclass(frozen=True)
class Workspace:
    """Paths and git plumbing under one workspace folder."""

    root: Path
    branch_prefix: str = "signoff/task-"
    timeout: float = 300.0

    def mirror(self, repo: str) -> Path:
        return self.root / "mirrors" / f"{hashlib.sha256(repo.encode()).hexdigest()[:20]}.git"

    def worktree(self, task_id: int) -> Path:
        return self.root / "worktrees" / f"task-{task_id}"

    def run_dir(self, task_id: int) -> Path:
        path = self.root / "runs" / f"task-{task_id}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def branch(self, task_id: int) -> str:
        return f"{self.branch_prefix}{task_id}"

    def mark(self, task_id: int) -> str:
        """The environment mark of this task's commands (see marked.kill_marked)."""
        return f"{self.root}:task-{task_id}"

    @contextlib.asynccontextmanager
    async def locked(self, mirror: Path) -> AsyncIterator[None]:
        """One git operation on a mirror at a time, across processes (fetch, worktree add)."""
        mirror.parent.mkdir(parents=True, exist_ok=True)
        with (mirror.parent / f"{mirror.name}.lock").open("a") as handle:
            await asyncio.to_thread(fcntl.flock, handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    async def fetch(self, repo: str) -> Path:
        """The repository's mirror, created or brought up to date (branches as origin/*)."""
        mirror = self.mirror(repo)
        async with self.locked(mirror):
            if not (mirror / "HEAD").exists():
                shutil.rmtree(mirror, ignore_errors=True)
                await git("init", "-q", "--bare", str(mirror), cwd=self.root)
                await git("remote", "add", "origin", repo, cwd=mirror)
            # A plain `git push` from the worktree (an agent's) goes nowhere; Signoff pushes
            # to the repository by its address, and only an approved commit (publish.py).
            await git("config", "remote.origin.pushurl", PUSH_DISABLED, cwd=mirror)
            await git("fetch", "-q", "--prune", "origin", cwd=mirror, timeout=self.timeout)
        return mirror

    async def sha(self, mirror: Path, ref: str) -> str | None:
        """The commit a ref names in the mirror, or None (also when there is no mirror)."""
        if not (mirror / "HEAD").exists():
            return None
        try:
            return await git("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", cwd=mirror)
        except GitError:
            return None

    async def add_worktree(self, mirror: Path, task_id: int, start: str) -> Path:
        """A fresh worktree on the task's branch, reset to `start` (any old one removed)."""
        path = self.worktree(task_id)
        async with self.locked(mirror):
            await self._remove(mirror, task_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            await git("worktree", "add", "-q", "-f", "-B", self.branch(task_id), str(path),
                      start, cwd=mirror)
        return path

    async def remove_worktree(self, mirror: Path, task_id: int) -> None:
        """Stop what still runs for the task, remove its worktree, prune git's records."""
        async with self.locked(mirror):
            await self._remove(mirror, task_id)

    async def _remove(self, mirror: Path, task_id: int) -> None:
        kill_marked(self.mark(task_id))
        path = self.worktree(task_id)
        if path.exists():
            with contextlib.suppress(GitError):
                await git("worktree", "remove", "--force", "--force", str(path), cwd=mirror)
            shutil.rmtree(path, ignore_errors=True)
        await git("worktree", "prune", cwd=mirror)

    async def delete_branch(self, mirror: Path, task_id: int) -> bool:
        """Delete the task's local branch; False when there was none."""
        async with self.locked(mirror):
            try:
                await git("branch", "-q", "-D", self.branch(task_id), cwd=mirror)
            except GitError:
                return False
        return True

    def mirrors(self) -> list[Path]:
        folder = self.root / "mirrors"
        return sorted(p for p in folder.glob("*.git") if p.is_dir()) if folder.is_dir() else []
