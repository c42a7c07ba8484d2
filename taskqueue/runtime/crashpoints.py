"""Named crash points a workload puts inside its stages, so tests can kill a real worker
(kill -9) at every stage and prove the work is done exactly once after recovery.

Production never sets `PREFIX_CRASH_AT`, and then a point does nothing. A test sets it to a
comma-separated list of point names; with `PREFIX_CRASH_DIR` set as well, each point fires
only once (a marker file remembers it), so one task can die at every point in turn across
many worker processes.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

Checkpoint = Callable[[str], Awaitable[None]]


def env_crash_points(prefix: str) -> Checkpoint:
    """A checkpoint that kills this process with SIGKILL where `{prefix}_CRASH_AT` says."""
    crash_env, dir_env = f"{prefix}_CRASH_AT", f"{prefix}_CRASH_DIR"

    async def checkpoint(name: str) -> None:
        wanted = os.environ.get(crash_env)
        if not wanted or name not in {p.strip() for p in wanted.split(",")}:
            return
        if folder := os.environ.get(dir_env):
            marker = Path(folder) / name
            if marker.exists():
                return
            marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint
