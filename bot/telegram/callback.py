"""Compact callback data for the approval buttons: `so1:<approval id>:<action>:<token>`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskqueue import Decision

PREFIX = "so1"
MAX_BYTES = 64  # Telegram's limit for callback_data

ACTIONS: dict[str, Decision] = {
    "a": Decision.APPROVED,
    "r": Decision.REVISED,
    "s": Decision.SKIPPED,
}
_PATTERN = re.compile(r"^so1:([1-9][0-9]{0,18}):([ars]):([0-9a-f]{6,16})$")


@dataclass(frozen=True)
class Tap:
    """What a button says: which approval, which decision, and the message's token."""

    approval_id: int
    decision: Decision
    token: str


def encode(approval_id: int, action: str, token: str) -> str:
    """The callback data of one button."""
    data = f"{PREFIX}:{approval_id}:{action}:{token}"
    if action not in ACTIONS or len(data.encode()) > MAX_BYTES:
        raise ValueError(f"cannot encode callback data {data!r}")
    return data


def decode(data: str | None) -> Tap | None:
    """The tap a button's data describes, or None when the data is not ours or malformed."""
    match = _PATTERN.match(data or "")
    if match is None:
        return None
    return Tap(int(match[1]), ACTIONS[match[2]], match[3])
