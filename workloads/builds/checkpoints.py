"""Named points inside the build stages where a test can kill the worker (kill -9).

Production never sets SIGNOFF_BUILDS_CRASH_AT, and then a checkpoint does nothing. A test
sets it to comma-separated point names; with SIGNOFF_BUILDS_CRASH_DIR set as well, each
point fires once (a marker file remembers it) across many worker processes.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

__all__ = ["CRASH_DIR_ENV", "CRASH_ENV", "POINTS", "Checkpoint", "env_checkpoint"]

CRASH_ENV = "SIGNOFF_BUILDS_CRASH_AT"
CRASH_DIR_ENV = "SIGNOFF_BUILDS_CRASH_DIR"

# Every point, in the order a task passes them.
POINTS = (
    "build.middle",  # built and stored, the state not saved
    "build.end",  # the build's state saved, not parked
    "park.middle",  # the Park about to be returned
    "publish.verified",  # approve and checksum verified, the marker not saved
    "publish.marked",  # `publish_started` saved, nothing sent
    "publish.sent",  # published, the result not saved
    "publish.end",  # the result saved, Done not returned
)

Checkpoint = Callable[[str], Awaitable[None]]


async def env_checkpoint(name: str) -> None:
    """Kill this process with SIGKILL if SIGNOFF_BUILDS_CRASH_AT names `name` (test only)."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted or name not in {p.strip() for p in wanted.split(",")}:
        return
    if folder := os.environ.get(CRASH_DIR_ENV):
        marker = Path(folder) / name
        if marker.exists():
            return
        marker.touch()
    os.kill(os.getpid(), signal.SIGKILL)
