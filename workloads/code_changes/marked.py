"""A task's outside commands (the agent, the tests), run through the core's runner and
marked in their environment, so what a dead worker left running can be found and killed.

Here a command is killed at once at its timeout (no SIGTERM first) and dies with the worker;
a stop request (shutdown, lease loss) raises Interrupted; a command that cannot start is
exit 127 with the reason as its output, as a shell reports it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from taskqueue import CommandError, CommandResult, run_command

__all__ = ["MARK_ENV", "Interrupted", "kill_marked", "run_marked"]

MARK_ENV = "SIGNOFF_CODE_RUN"


class Interrupted(Exception):
    """The command was stopped because the slice was asked to stop (shutdown, lease loss)."""


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries `SIGNOFF_CODE_RUN=mark`: what is left
    of a run whose worker died. Returns how many were signalled."""
    needle = f"{MARK_ENV}={mark}".encode()
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\x00"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


async def run_marked(argv: Sequence[str], *, cwd: Path, log: Path, timeout: float,
                     env: Mapping[str, str], mark: str, **options: Any) -> CommandResult:
    """Run `argv` with `env` and the mark (`options`: run_command's limits, heartbeat and
    cancelled event) until it exits or `timeout` passes; Interrupted when cancelled. The
    whole process group is gone before this returns."""
    try:
        result = await run_command(argv, cwd=cwd, log=log, timeout=timeout,
                                   env={**env, MARK_ENV: mark}, term_grace=0,
                                   die_with_parent=True, **options)
    except CommandError as exc:
        said = f"[signoff: {exc}]\n".encode()
        log.write_bytes(said)
        return CommandResult(127, said, len(said), len(said), False, 0.0, log)
    if result.stopped == "cancelled":
        raise Interrupted("stopped: the worker is shutting down or lost the task")
    return result
