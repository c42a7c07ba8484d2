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
