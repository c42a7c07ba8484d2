"""Check a repository out at one commit into a fresh workspace, with real git, and prove it.

The workspace is removed first (a crashed build leaves a half-built tree behind). git runs
without a shell, with prompts off and the `ext::` transport refused (it runs commands).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workloads.builds.environment import clean_env

__all__ = ["CheckoutError", "Source", "checkout", "shown_repository", "source_from_payload"]

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
MAX_REPO = 2000
_USERINFO = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/@\s]*@", re.IGNORECASE)
_GIT = ("git", "-c", "protocol.ext.allow=never", "-c", "advice.detachedHead=false")


def shown_repository(text: str) -> str:
    """Text without the credentials a URL may carry (`https://user:token@host/…`)."""
    return _USERINFO.sub(r"\1", text)


class CheckoutError(Exception):
    """The payload names no valid source, or git could not check it out."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class Source:
    """What to build: a repository (path or URL), a full commit SHA and, optionally, a branch."""

    repository: str
    commit: str
    branch: str | None = None


def source_from_payload(payload: Mapping[str, Any]) -> Source:
    """The payload's `repository`, `commit` and `branch`, checked; CheckoutError if not."""
    repo, commit, branch = (payload.get(k) for k in ("repository", "commit", "branch"))
    if not isinstance(repo, str) or not repo.strip() or len(repo) > MAX_REPO:
        raise CheckoutError("payload.repository must be a repository path or URL")
    if repo.startswith("-") or repo.lower().startswith("ext::"):
        raise CheckoutError("payload.repository must not start with '-' or 'ext::'")
    if not isinstance(commit, str) or not _SHA.match(commit.lower()):
        raise CheckoutError("payload.commit must be a full hexadecimal commit SHA")
    if branch is not None and (not isinstance(branch, str) or not _BRANCH.match(branch)
                               or ".." in branch):
        raise CheckoutError("payload.branch must be a plain branch name")
    return Source(repo.strip(), commit.lower(), branch)


async def _git(args: list[str], cwd: Path | None, timeout: float) -> str:
    proc = await asyncio.create_subprocess_exec(
        *_GIT, *args, cwd=cwd, env=clean_env(), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        if proc.returncode is None:  # git runs helpers (ssh, remote-https): the whole group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        raise
    if proc.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise CheckoutError(f"git {args[0]} failed: {shown_repository(last[0])[:300]}",
                            retryable=True)
    return out.decode("utf-8", "replace").strip()


async def checkout(source: Source, workspace: Path, *, timeout: float) -> str:
    """Clone into an empty `workspace`, detach at the commit, return the verified HEAD."""
    if workspace.exists():
        await asyncio.to_thread(shutil.rmtree, workspace)
    workspace.parent.mkdir(parents=True, exist_ok=True)
    branch = ["--branch", source.branch] if source.branch else []
    try:
        await _git(["clone", "--quiet", "--no-checkout", *branch, "--", source.repository,
                    str(workspace)], None, timeout)
        if not await _has_commit(workspace, source.commit, timeout):
            await _fetch(workspace, source.commit, timeout)
        await _git(["checkout", "--quiet", "--detach", source.commit], workspace, timeout)
        head = await _git(["rev-parse", "HEAD"], workspace, timeout)
    except TimeoutError:
        raise CheckoutError(f"git timed out after {timeout:g} s", retryable=True) from None
    if head != source.commit:
        raise CheckoutError(f"checked out {head[:12]}, not the requested {source.commit[:12]}")
    return head


async def _has_commit(workspace: Path, commit: str, timeout: float) -> bool:
    try:
        await _git(["cat-file", "-e", f"{commit}^{{commit}}"], workspace, timeout)
    except CheckoutError:
        return False
    return True


async def _fetch(workspace: Path, commit: str, timeout: float) -> None:
    """A commit no branch reaches (clone just worked, so a failure means it is not there)."""
    try:
        await _git(["fetch", "--quiet", "origin", commit], workspace, timeout)
    except CheckoutError as exc:
        raise CheckoutError(f"commit {commit[:12]} is not in the repository ({exc})") from None
