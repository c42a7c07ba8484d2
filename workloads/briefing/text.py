"""Database text made safe to show: control characters as visible escapes, one line, cut."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

__all__ = ["age", "cut", "terminal", "visible", "when"]

_SPACE = re.compile(r"[ \t\r\n\f\v]+")
# Bidi overrides and isolates reorder what a reader sees; show them as escapes too.
_BIDI = {"\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def _escape(ch: str) -> str:
    if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ch


def terminal(text: str) -> str:
    """Text for a terminal: every control, format or bidi character except the newline
    shown as an escape (`\\x1b`), so nothing from the database drives the terminal."""
    return "\n".join("".join(_escape(ch) for ch in line) for line in text.split("\n"))


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def visible(value: object, limit: int) -> str:
    """One line of at most `limit` characters: whitespace runs as one space, control
    characters as escapes (an error's `\\x1b[31m` stays readable and harmless)."""
    text = _SPACE.sub(" ", str(value)).strip()
    return cut("".join(_escape(ch) for ch in text), limit)


def age(since: datetime, now: datetime) -> str:
    """How long ago, coarsely: `12 min`, `5 h`, `2 d 3 h`."""
    minutes = max(0, int((now - since).total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} min"
    hours = minutes // 60
    if hours < 24:
        return f"{hours} h"
    return f"{hours // 24} d {hours % 24} h" if hours % 24 else f"{hours // 24} d"


def when(value: datetime, now: datetime) -> str:
    """A time in `now`'s zone: `07:30` today, else `Wed 2 Dec 07:30`."""
    local = value.astimezone(now.tzinfo)
    if local.date() == now.date():
        return local.strftime("%H:%M")
    return f"{local:%a} {local.day} {local:%b %H:%M}"
