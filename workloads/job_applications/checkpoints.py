"""Named points inside the handler's stages where a test can kill the worker (kill -9).

Production never sets SIGNOFF_JOBS_CRASH_AT, and then a checkpoint does nothing. A test sets
it to a comma-separated list of point names; with SIGNOFF_JOBS_CRASH_DIR set as well, each
point fires only once (a marker file remembers it), so one task can die at every point in
turn across many worker processes.
"""

from __future__ import annotations

from taskqueue import Checkpoint, env_crash_points

__all__ = ["CRASH_DIR_ENV", "CRASH_ENV", "POINTS", "Checkpoint", "env_checkpoint"]

CRASH_ENV = "SIGNOFF_JOBS_CRASH_AT"
CRASH_DIR_ENV = "SIGNOFF_JOBS_CRASH_DIR"

# Every point, in the order a task passes them. `.middle`: the stage's work is done but not
# saved; `.end`: saved, the outcome not yet returned to the runtime.
POINTS = (
    "draft.middle", "draft.end",
    "compile.middle", "compile.end",
    "fill.middle", "fill.end",
    "park.middle",
    "submit.filled",  # refilled and fingerprint checked, approval not yet verified
    "submit.verified",  # approval verified, submit_started not yet saved
    "submit.marked",  # submit_started saved, not clicked
    "submit.clicked",  # clicked and judged, outcome not yet saved
    "submit.end",  # outcome saved, not yet returned
)


env_checkpoint: Checkpoint = env_crash_points("SIGNOFF_JOBS")
