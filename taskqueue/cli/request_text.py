"""An approval's request as readable terminal text: every key, nested ones dotted, lists
one item a line, multi-line text (a diff, a log) as an indented block.

Generic on purpose: the core knows no request kinds. Every line goes through `safe()`, so
control characters and escape sequences from the database are shown, never obeyed.
"""

from __future__ import annotations

import json
from typing import Any

from taskqueue.errors import printable

# Multi-line values longer than this many lines are cut (the rest: `signoff show --json`).
MAX_BLOCK_LINES = 200
MAX_DEPTH = 4


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _block(key: str, text: str, indent: str) -> list[str]:
    lines = text.rstrip("\n").splitlines()
    shown = [f"{indent}{key}:"] + [f"{indent}  | {printable(line)}"
                                   for line in lines[:MAX_BLOCK_LINES]]
    if len(lines) > MAX_BLOCK_LINES:
        shown.append(f"{indent}  | … {len(lines) - MAX_BLOCK_LINES} more lines")
    return shown


def _item(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def _lines(key: str, value: Any, indent: str, depth: int) -> list[str]:
    if isinstance(value, str) and "\n" in value.strip("\n"):
        return _block(key, value, indent)
    if isinstance(value, dict) and value and depth < MAX_DEPTH:
        out = [f"{indent}{printable(key)}:"]
        for k, v in value.items():
            out += _lines(str(k), v, indent + "  ", depth + 1)
        return out
    if isinstance(value, list) and value and all(not isinstance(v, list) for v in value):
        if all(isinstance(v, str) and "\n" not in v for v in value) and len(value) > 8:
            return _block(key, "\n".join(value), indent)
        return [f"{indent}{printable(key)}:"] + [f"{indent}  - {printable(_item(v))}"
                                                 for v in value]
    return [f"{indent}{printable(key)}: {printable(_scalar(value))}"]


def request_lines(request: dict[str, Any], indent: str = "  ") -> list[str]:
    """The request, a key a line (or a block), each line safe for a terminal."""
    out: list[str] = []
    for key, value in request.items():
        out += _lines(str(key), value, indent, 0)
    return out
