"""Named points in a briefing slice where a test can kill the worker (kill -9).

Production never sets SIGNOFF_BRIEFING_CRASH_AT, and then a checkpoint does nothing. A test
sets it to comma-separated point names; with SIGNOFF_BRIEFING_CRASH_DIR set too, each point
fires only once (a marker file remembers it), across worker processes.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

__all__ = ["CRASH_DIR_ENV", "CRASH_ENV", "POINTS", "env_checkpoint"]

CRASH_ENV = "SIGNOFF_BRIEFING_CRASH_AT"
CRASH_DIR_ENV = "SIGNOFF_BRIEFING_CRASH_DIR"

# In the order a slice passes them.
POINTS = (
    "send.before",  # gathered and rendered, nothing sent
    "send.after",  # the message is in the outbox, the marker not yet saved
    "send.saved",  # marker saved, the outcome not yet returned
)


async def env_checkpoint(name: str) -> None:
    """Kill this process with SIGKILL if SIGNOFF_BRIEFING_CRASH_AT names `name` (tests)."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted or name not in {p.strip() for p in wanted.split(",")}:
        return
    if folder := os.environ.get(CRASH_DIR_ENV):
        marker = Path(folder) / name
        if marker.exists():
            return
        marker.touch()
    os.kill(os.getpid(), signal.SIGKILL)
