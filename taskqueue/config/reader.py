"""Reads a config file into a TOML document, bounded: its size, and how deeply tables and
arrays nest (checked before the parser recurses, and again on the parsed document)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from taskqueue.config.checker import Checker, KeyPath, dotted
from taskqueue.errors import ConfigError

# A config file is a page or two; a megabyte is past any real one.
MAX_CONFIG_BYTES = 1024 * 1024
# Tables, arrays and inline tables inside each other: the deepest real config is 4 or 5.
MAX_CONFIG_DEPTH = 32

# What can open or close a level, or hide brackets from the count (strings, comments).
_SPECIAL = re.compile(r"[\"'#\[\]{}]")
_BASIC_BODY = re.compile(r"[^\"\\\n]*+(?:\\.[^\"\\\n]*+)*+")
_LITERAL_BODY = re.compile(r"[^'\n]*+")


def read_toml(file: Path) -> tuple[dict[str, Any], str]:
    """The parsed document and its text; ConfigError (one line naming the file, and the
    line or key where it can) when it cannot be read, is too big, too deep or not TOML."""
    text = _read_text(file)
    if (line := nesting_line(text)) is not None:
        raise ConfigError(f"{file}, line {line}: nested deeper than {MAX_CONFIG_DEPTH} "
                          "levels (tables, arrays and inline tables inside each other)")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: invalid TOML: {exc}") from None
    except ValueError:  # int() past Python's digit limit, which tomllib lets through
        raise ConfigError(f"{file}: invalid TOML: a number with thousands of digits") from None
    except RecursionError:  # a nesting the scan above missed: still one line
        raise ConfigError(f"{file}: nested too deeply to read") from None
    if (key := deepest_key(doc)) is not None:
        # A dotted key is recorded whole, deeper than `key`; an array's items not at all.
        c = Checker(text, file)
        line = min((n for k, n in c.lines.items() if k[:len(key)] == key),
                   default=None) or c.line_of(key)
        at = f"{file}, line {line}" if line else str(file)
        raise ConfigError(f"{at}: {dotted(key)}: nested deeper than {MAX_CONFIG_DEPTH} "
                          "levels (dotted keys and tables count)")
    return doc, text


def _read_text(file: Path) -> str:
    try:
        with file.open("rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{file}: larger than {MAX_CONFIG_BYTES // 1024} KiB; "
                          "is this the config file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start})") from None


def nesting_line(text: str, limit: int = MAX_CONFIG_DEPTH) -> int | None:
    """The line where brackets and braces outside strings and comments first nest deeper
    than `limit`, else None. A flat scan, so it is safe on any input."""
    depth, pos = 0, 0
    while match := _SPECIAL.search(text, pos):
        char, at = match.group(), match.start()
        pos = at + 1
        if char == "#":
            end = text.find("\n", at)
            pos = len(text) if end < 0 else end
        elif char in "\"'":
            pos = _string_end(text, at, char)
        elif char in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, at) + 1
        else:
            depth = max(depth - 1, 0)
    return None


def _string_end(text: str, at: int, quote: str) -> int:
    """Where the string starting at `at` ends (unterminated: its line's or the text's end)."""
    if text.startswith(quote * 3, at):
        pos = at + 3
        while (end := text.find(quote * 3, pos)) >= 0:
            if quote == '"' and _escaped(text, end):
                pos = end + 1
                continue
            end += 3
            for _ in range(2):  # up to two quotes of the content may touch the delimiter
                if text.startswith(quote, end):
                    end += 1
            return end
        return len(text)
    body = (_BASIC_BODY if quote == '"' else _LITERAL_BODY).match(text, at + 1)
    end = body.end() if body else at + 1
    return end + 1 if text.startswith(quote, end) else end


def _escaped(text: str, at: int) -> bool:
    """Whether an odd run of backslashes precedes `at`."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def deepest_key(doc: dict[str, Any], limit: int = MAX_CONFIG_DEPTH) -> KeyPath | None:
    """The first key nested deeper than `limit` (dotted keys and `[a.b.c]` tables make
    depth the bracket scan cannot see), else None. Walks with a stack, not recursion."""
    stack: list[tuple[Any, KeyPath]] = [(doc, ())]
    while stack:
        value, key = stack.pop()
        if len(key) > limit:
            return key
        items = (value.items() if isinstance(value, dict)
                 else enumerate(value) if isinstance(value, list) else ())
        stack.extend((v, (*key, k)) for k, v in items if isinstance(v, dict | list))
    return None
