"""Named points inside the build stages where a test can kill the worker (kill -9).

Production never sets SIGNOFF_BUILDS_CRASH_AT, and then a checkpoint does nothing. A test
sets it to comma-separated point names; with SIGNOFF_BUILDS_CRASH_DIR set as well, each
point fires once (a marker file remembers it) across many worker processes.
"""

from __future__ import annotations

from taskqueue import Checkpoint, env_crash_points

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


env_checkpoint: Checkpoint = env_crash_points("SIGNOFF_BUILDS")
