"""Running git: no shell, no prompts, no outside helpers, a timeout that kills the group."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

__all__ = ["GitError", "git", "git_env"]

# Options every call gets: never run a remote helper that executes commands, never ask.
_SAFE = ("-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never",
         "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false")
_STRIP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG_PARAMETERS")


class GitError(Exception):
    """A git command failed; the message names the command and git's last words."""

    def __init__(self, args: tuple[str, ...], code: int | None, stderr: str) -> None:
        self.code, self.stderr = code, stderr
        last = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
        what = "timed out" if code is None else f"exit {code}"
        super().__init__(f"git {' '.join(args[:2])} failed ({what}): {last[:300]}")


def git_env() -> dict[str, str]:
    """The environment git runs with: the worker's, minus git overrides and secrets."""
    env = {k: v for k, v in os.environ.items() if k not in _STRIP}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_ASKPASS="", SSH_ASKPASS="")
    return env


async def git(*args: str, cwd: Path, timeout: float = 300.0,
              env: dict[str, str] | None = None, stdout_to: Path | None = None) -> str:
    """Run `git ARGS` in `cwd`; its stdout (or `stdout_to` gets it); GitError on failure."""
    sink = stdout_to.open("wb") if stdout_to is not None else None
    try:
        proc = await asyncio.create_subprocess_exec(
            "git", *_SAFE, *args, cwd=cwd, env={**git_env(), **(env or {})},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sink if sink is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise GitError(args, None, "") from None
    finally:
        if sink is not None:
            sink.close()
    if proc.returncode != 0:
        raise GitError(args, proc.returncode, err.decode("utf-8", "replace"))
    return (out or b"").decode("utf-8", "replace").strip()
