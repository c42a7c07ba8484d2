"""Typed reads of one config section (a workload's `[workloads.NAME]` table), each error
naming `section.key` (and, after it, the file and line it was read from): the field checks every
workload's settings module shares."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from taskqueue.config.checker import Checker, split_key
from taskqueue.errors import ConfigError

# The largest number a section's numeric key takes unless the key names a narrower range:
# it keeps every value a finite timer, byte count or PostgreSQL interval.
MAX_NUMBER = 10**12

# The longest wait a `*_seconds` key takes (30 days): longer timers overflow the poll()
# and select() calls that wait on subprocesses.
MAX_SECONDS = 2_592_000

# Where each section was last read from (workload_section records it), so an error can
# name the file and the line of the key.
_SOURCES: dict[str, Checker] = {}


def remember_source(section: str, text: str | None, file: Path | None) -> None:
    """Record (or forget, with no file) the file and text `section` was read from."""
    if file is None or text is None:
        _SOURCES.pop(section, None)
    else:
        _SOURCES[section] = Checker(text, file)


class ConfigSection:
    """Checks the keys of the section `name`; errors are `error("name.key: message")`.

    `secrets` names the keys whose values come only from the environment (below the
    section, dotted for a sub-table: "github.token"), each with where the value goes
    instead ("set SIGNOFF_GITHUB_TOKEN"); `known` refuses them in the file first."""

    def __init__(self, name: str, *, error: type[ConfigError] = ConfigError,
                 secrets: Mapping[str, str] | None = None) -> None:
        self.name, self.error = name, error
        self.secrets = dict(secrets or {})

    def fail(self, key: str, message: str) -> ConfigError:
        source = _SOURCES.get(self.name)
        if source is None:
            return self.error(f"{self.name}.{key}: {message}")
        # After the message: the message's own start ("section.key: ") stays as it was.
        line = source.line_of((*split_key(self.name), *split_key(key)))
        where = f"{source.path}, line {line}" if line else str(source.path)
        return self.error(f"{self.name}.{key}: {message} ({where})")

    def known(self, table: Mapping[str, Any], allowed: Iterable[str], prefix: str = "") -> None:
        """No secret is in `table` (the section's own, or its sub-table at `prefix`), and
        every key of it is one of `allowed`."""
        for key, instead in self.secrets.items():
            if key.startswith(prefix) and key[len(prefix):] in table:
                raise self.fail(key, f"secrets never go in the file; {instead}")
        names = sorted(allowed)
        for key in table:
            if key not in names:
                raise self.fail(f"{prefix}{key}",
                                f"unknown key; expected one of {', '.join(names)}")

    def text(self, table: Mapping[str, Any], key: str, default: str | None = None, *,
             prefix: str = "", required: bool = False, one_line: bool = False,
             empty: bool = False) -> str:
        """A string, stripped: non-empty (unless `empty`), without a newline if `one_line`;
        a missing key with no default says "required" when `required`."""
        value = table.get(key, default)
        if value is None and required:
            raise self.fail(f"{prefix}{key}", "required")
        if (not isinstance(value, str) or (not empty and not value.strip())
                or (one_line and "\n" in value)):
            kind = "one-line string" if one_line else "string"
            raise self.fail(f"{prefix}{key}", f"must be a non-empty {kind}, not {value!r}")
        return value.strip()

    def positive(self, table: Mapping[str, Any], key: str, default: Any, *,
                 whole: bool = False, prefix: str = "", high: float = MAX_NUMBER) -> Any:
        """A finite number above 0 and at most `high` (a whole one if `whole`); booleans,
        nan and inf are refused."""
        value = table.get(key, default)
        kind = int if whole else (int, float)
        noun = "a whole number" if whole else "a number"
        if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
            raise self.fail(f"{prefix}{key}", f"must be {noun} above 0, not {value!r}")
        if not math.isfinite(value) or value > high:
            raise self.fail(f"{prefix}{key}",
                            f"must be {noun} above 0 and at most {high:,}, not {value!r}")
        return value

    def seconds(self, table: Mapping[str, Any], key: str, default: float, *,
                prefix: str = "") -> Any:
        """A wait in seconds: above 0 and at most MAX_SECONDS (30 days)."""
        return self.positive(table, key, default, prefix=prefix, high=MAX_SECONDS)

    def number(self, table: Mapping[str, Any], key: str, default: float, low: float,
               high: float, *, prefix: str = "") -> float:
        """A finite number from `low` to `high`, both included."""
        value = table.get(key, default)
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or not low <= value <= high):
            raise self.fail(f"{prefix}{key}",
                            f"must be a number from {low:g} to {high:g}, not {value!r}")
        return float(value)

    def whole(self, table: Mapping[str, Any], key: str, default: int, low: int, high: int,
              prefix: str = "") -> int:
        """A whole number from `low` to `high`."""
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(f"{prefix}{key}",
                            f"must be a whole number from {low} to {high}, not {value!r}")
        return value

    def flag(self, table: Mapping[str, Any], key: str, default: bool) -> bool:
        """true or false."""
        value = table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, not {value!r}")
        return value
