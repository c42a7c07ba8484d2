"""How long the suite waits: one scale for every wait, so a busy machine makes tests slower,
never red.

A wait for something that must happen costs nothing when it happens at once, so its limit is
generous (`WAIT`); `SIGNOFF_TEST_TIME_SCALE` stretches every limit and lease that a test
derives from here, for a machine slower still. A claim about speed ("wakes on NOTIFY, not on
its minute-long poll") compares against the slow alternative, never against a fraction of a
second."""

from __future__ import annotations

import os

SCALE = max(1.0, float(os.environ.get("SIGNOFF_TEST_TIME_SCALE") or 1))


def patience(seconds: float) -> float:
    """`seconds` on a quiet machine, stretched by the suite's scale."""
    return seconds * SCALE


WAIT = patience(60)
"""The longest a test waits for something that must happen."""

LEASE = patience(20)
"""A lease that must hold while a slice runs, with room for a stalled scheduler."""


def limit(timeout: float | None) -> float:
    """A wait's limit: never below `WAIT`, whatever a caller asked for."""
    return max(WAIT, patience(timeout or 0))
