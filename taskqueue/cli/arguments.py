"""Argument types the command line shares: each refuses a bad value with one line."""

from __future__ import annotations

import argparse
import math


def positive(text: str) -> float:
    """A positive, finite number of seconds."""
    value = float(text)
    if not value > 0 or math.isinf(value):  # `not >` also refuses nan
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def non_negative(text: str) -> float:
    """A finite number, 0 or more."""
    value = float(text)
    if not value >= 0 or math.isinf(value):  # `not >=` also refuses nan
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 or more, not {text}")
    return value


def cap_value(text: str) -> int | None:
    """A cap: 0 or more, or none/off/unlimited for no cap."""
    if text.lower() in {"none", "off", "unlimited"}:
        return None
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more (or 'none'), not {text}")
    return value


def on_off(text: str) -> bool:
    """A switch: on or off."""
    if text.lower() in {"on", "true", "yes"}:
        return True
    if text.lower() in {"off", "false", "no"}:
        return False
    raise argparse.ArgumentTypeError(f"must be on or off, not {text}")


# The longest age a retention run accepts: a century (PostgreSQL's intervals hold more, but
# nothing older can exist and a larger number is a typo).
MAX_DAYS = 36500


def positive_days(text: str) -> float:
    """A positive number of days (fractions allowed), at most MAX_DAYS."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_DAYS:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(
            f"must be a number of days, more than 0 and at most {MAX_DAYS}, not {text!r}")
    return value
