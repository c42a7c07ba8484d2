"""Checks a parsed TOML document key by key; errors name the key and its line in the file."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from taskqueue.errors import ConfigError

KeyPath = tuple[str | int, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")
_KEY_PART = re.compile(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)")
TIME_RE = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
# Past this a whole number fits no database integer column (bigint): the bound of any
# numeric key that has no narrower one.
_INT_LIMIT = 2**63 - 1


def split_key(text: str) -> tuple[str, ...]:
    """`a."b.c".d` → ("a", "b.c", "d")."""
    return tuple(next(g for g in m.groups() if g is not None) for m in _KEY_PART.finditer(text))


def key_lines(text: str) -> dict[KeyPath, int]:
    """The line (1-based) where each table header and each key is written."""
    lines: dict[KeyPath, int] = {}
    table: KeyPath = ()
    counts: dict[KeyPath, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _HEADER.match(line):
            path: KeyPath = split_key(header[2])
            if header[1] == "[[":
                counts[path] = counts.get(path, -1) + 1
                path = (*path, counts[path])
            table = path
            lines.setdefault(table, number)
        elif assign := _ASSIGN.match(line):
            lines.setdefault((*table, *split_key(assign[1])), number)
    return lines


class Checker:
    """Typed reads from a TOML document; every error says which key and which line."""

    def __init__(self, text: str, path: Path | None) -> None:
        self.lines = key_lines(text)
        self.path = path

    def line_of(self, key: KeyPath) -> int | None:
        for n in range(len(key), 0, -1):
            if (line := self.lines.get(key[:n])) is not None:
                return line
        return None

    def error(self, key: KeyPath, message: str) -> ConfigError:
        where = str(self.path) if self.path else "config"
        line = self.line_of(key)
        at = f"{where}, line {line}" if line else where
        return ConfigError(f"{at}: {dotted(key)}: {message}")

    def table(self, doc: Mapping[str, Any], key: KeyPath, allowed: set[str]) -> Mapping[str, Any]:
        """A sub-table (empty when absent) whose keys must all be in `allowed`."""
        value = doc.get(str(key[-1]), {}) if key else doc
        return self.keys(value, key, allowed)

    def keys(self, value: Any, key: KeyPath, allowed: set[str]) -> Mapping[str, Any]:
        """`value` as a table whose keys must all be in `allowed`."""
        if not isinstance(value, Mapping):
            raise self.error(key, "must be a table")
        for name in value:
            if name not in allowed:
                raise self.error((*key, name), "unknown key; expected one of "
                                 + ", ".join(sorted(allowed)))
        return value

    def get(self, table: Mapping[str, Any], key: KeyPath, kind: str, default: Any = None,
            minimum: float | None = None, maximum: float | None = None) -> Any:
        """The value at `key[-1]` of `table`, checked as `kind` (a number also finite, and
        within `minimum` and `maximum` when given), else `default`."""
        name = str(key[-1])
        if name not in table:
            return default
        value = table[name]
        check = _KINDS[kind]
        if not check(value):
            raise self.error(key, f"must be {_DESCRIBE[kind]}, not {_shown(value)}")
        if kind in ("int", "num"):
            self._in_range(key, value, minimum, maximum)
        if kind == "times":
            for t in value:
                if not TIME_RE.match(t):
                    raise self.error(key, f"times are HH:MM (24 h), not {t!r}")
            return tuple(value)
        return tuple(value) if kind == "ints" else value


    def _in_range(self, key: KeyPath, value: float, minimum: float | None,
                  maximum: float | None) -> None:
        # nan and inf pass every comparison below or overflow what they become (an
        # interval, a timer, an integer column), so they are refused first.
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(key, f"must be a finite number, not {value!r}")
        low = -_INT_LIMIT if minimum is None else minimum
        high = _INT_LIMIT if maximum is None else maximum
        # Below the range the message keeps its old words ("at least N"): people and
        # scripts match them.
        if value < low:
            upper = f" (and at most {_bound(high)})" if maximum is not None else ""
            raise self.error(key, f"must be at least {_bound(low)}{upper}, not {_shown(value)}")
        if value > high:
            raise self.error(key, f"must be at most {_bound(high)}, not {_shown(value)}")


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _shown(value: Any) -> str:
    """A value for a one-line message: a huge number or string is cut short."""
    if isinstance(value, int) and value.bit_length() > 128:  # repr may refuse past 4300 digits
        return f"a number of about {value.bit_length() * 3 // 10} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def dotted(key: KeyPath) -> str:
    out = ""
    for part in key:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_KINDS = {
    "int": _is_int,
    "num": _is_num,
    "str": lambda v: isinstance(v, str) and bool(v.strip()),
    "bool": lambda v: isinstance(v, bool),
    "ints": lambda v: isinstance(v, list) and all(_is_int(x) for x in v),
    "times": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "chat": _is_int,
}
_DESCRIBE = {
    "int": "a whole number",
    "num": "a number",
    "str": "a non-empty string",
    "bool": "true or false",
    "ints": "a list of whole numbers",
    "times": 'a list of "HH:MM" strings',
    "chat": "a chat id (a number, negative for groups)",
}
