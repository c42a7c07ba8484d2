"""Typed reads of one config section (a workload's `[workloads.NAME]` table), each error
naming `section.key`: the field checks every workload's settings module shares."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from taskqueue.errors import ConfigError


class ConfigSection:
    """Checks the keys of the section `name`; errors are `error("name.key: message")`."""

    def __init__(self, name: str, *, error: type[ConfigError] = ConfigError) -> None:
        self.name, self.error = name, error

    def fail(self, key: str, message: str) -> ConfigError:
        return self.error(f"{self.name}.{key}: {message}")

    def known(self, table: Mapping[str, Any], allowed: Iterable[str], prefix: str = "") -> None:
        """Every key of `table` is one of `allowed`."""
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
                 whole: bool = False, prefix: str = "") -> Any:
        """A number above 0 (a whole one if `whole`); booleans are refused."""
        value = table.get(key, default)
        kind = int if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
            noun = "a whole number" if whole else "a number"
            raise self.fail(f"{prefix}{key}", f"must be {noun} above 0, not {value!r}")
        return value

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
