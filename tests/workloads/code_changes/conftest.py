"""Fixtures for the code-changes workload: a bare remote with a push counter, agents, a
stand-in GitHub API, and settings pointing at them all."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from workloads.code_changes.settings import CodeSettings, GitHubSettings

from .agents import EDIT, TESTS_PASS, write_agent
from .fake_github import TOKEN, FakeGitHub, running_github

GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
# Counts every ref update the remote accepts (a real push), one line each.
POST_RECEIVE = """#!/bin/sh
while read old new ref; do echo "$new $ref" >> "$(dirname "$0")/../pushes.log"; done
"""


def sh(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@dataclass(frozen=True)
class Remote:
    """A bare repository standing in for the remote; `pushes()` reads its counter."""

    path: Path

    def pushes(self) -> list[str]:
        log = self.path / "pushes.log"
        return log.read_text().splitlines() if log.exists() else []

    def branch_sha(self, branch: str) -> str | None:
        out = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/heads/{branch}"],
                             cwd=self.path, capture_output=True, text=True)
        return out.stdout.strip() or None

    def show(self, ref: str, path: str) -> str:
        return sh("show", f"{ref}:{path}", cwd=self.path)


@pytest.fixture
def remote(tmp_path: Path) -> Remote:
    seed, bare = tmp_path / "seed", tmp_path / "remote.git"
    seed.mkdir()
    sh("init", "-q", "-b", "main", cwd=seed)
    (seed / "README.md").write_text("# Widgets\n")
    (seed / "app.py").write_text("print('hello')\n")
    sh("add", "-A", cwd=seed)
    sh("commit", "-q", "-m", "initial", cwd=seed)
    sh("clone", "-q", "--bare", str(seed), str(bare), cwd=tmp_path)
    hook = bare / "hooks" / "post-receive"
    hook.write_text(POST_RECEIVE)
    hook.chmod(0o755)
    return Remote(bare)


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with running_github() as fake:
        yield fake


@pytest.fixture
def settings(tmp_path: Path, github: FakeGitHub) -> CodeSettings:
    agents = tmp_path / "agents"
    agents.mkdir()
    return CodeSettings(
        workspace=tmp_path / "ws",
        agent_command=write_agent(agents, "edit", EDIT),
        agent_timeout=20,
        test_command=(sys.executable, "-c", TESTS_PASS),
        test_timeout=20,
        git_timeout=20,
        github=GitHubSettings(api_url=github.base_url, repo="acme/widgets", token=TOKEN),
        sandbox_read=sandbox_read(agents),
    )


def sandbox_read(*more: Path) -> tuple[Path, ...]:
    """What the stand-in agents need shown in the sandbox: Python's own installation (it
    may sit in root's home folder, which the sandbox hides) and their folder under /tmp."""
    return (Path(sys.base_prefix), *more)


def with_agent(settings: CodeSettings, folder: Path, name: str, source: str,
               **changes: object) -> CodeSettings:
    folder.mkdir(exist_ok=True)
    return replace(settings, agent_command=write_agent(folder, name, source),
                   **changes)  # type: ignore[arg-type]


def payload(remote: Remote, instruction: str = "Add a greeting", **extra: object) -> dict:
    return {"repo": str(remote.path), "base": "main", "instruction": instruction, **extra}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")
