"""Named points in a vm_ops slice where a test can kill the worker (kill -9).

Production never sets SIGNOFF_VMOPS_CRASH_AT, and then a checkpoint does nothing. A test sets
it to comma-separated point names; with SIGNOFF_VMOPS_CRASH_DIR set too, each point fires
only once (a marker file remembers it), across worker processes.
"""

from __future__ import annotations

from taskqueue import Checkpoint, env_crash_points

__all__ = ["CRASH_DIR_ENV", "CRASH_ENV", "POINTS", "Checkpoint", "env_checkpoint"]

CRASH_ENV = "SIGNOFF_VMOPS_CRASH_AT"
CRASH_DIR_ENV = "SIGNOFF_VMOPS_CRASH_DIR"

# In the order a task passes them.
POINTS = (
    "park.before",  # the diff is computed, the task not yet parked
    "resume.start",  # claimed again after a decision, nothing read yet
    "act.verified",  # approval and drift checked, the "acting" marker not yet saved
    "act.marked",  # marker saved, the mutating call not yet made
    "act.issued",  # the hypervisor's task finished, the result not yet verified
    "act.done",  # verified, the outcome not yet returned
)


env_checkpoint: Checkpoint = env_crash_points("SIGNOFF_VMOPS")
