"""Named points in a briefing slice where a test can kill the worker (kill -9).

Production never sets SIGNOFF_BRIEFING_CRASH_AT, and then a checkpoint does nothing. A test
sets it to comma-separated point names; with SIGNOFF_BRIEFING_CRASH_DIR set too, each point
fires only once (a marker file remembers it), across worker processes.
"""

from __future__ import annotations

from taskqueue import Checkpoint, env_crash_points

__all__ = ["CRASH_DIR_ENV", "CRASH_ENV", "POINTS", "env_checkpoint"]

CRASH_ENV = "SIGNOFF_BRIEFING_CRASH_AT"
CRASH_DIR_ENV = "SIGNOFF_BRIEFING_CRASH_DIR"

# In the order a slice passes them.
POINTS = (
    "send.before",  # gathered and rendered, nothing sent
    "send.after",  # the message is in the outbox, the marker not yet saved
    "send.saved",  # marker saved, the outcome not yet returned
)

env_checkpoint: Checkpoint = env_crash_points("SIGNOFF_BRIEFING")
