"""A typed reader over parsed TOML whose every error names the file and the field path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

_TYPE_NAMES = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "a table",
}


class ProfileError(ValueError):
    """The profile file is missing, unreadable or has a field of the wrong shape."""


def _describe(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class Node:
    """One TOML table plus where it sits, so errors can say `experience[1].bullets[0].text`."""

    data: Mapping[str, object]
    path: str
    source: str

    def where(self, key: str | int) -> str:
        """The dotted path of `key` below this table."""
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> NoReturn:
        """Raise a ProfileError for `key` below this table."""
        raise ProfileError(f"{self.source}: {self.where(key)}: {message}")

    def check_keys(self, allowed: set[str]) -> None:
        """Reject unknown keys: a typo should fail loudly, not be silently ignored."""
        for key in self.data:
            if key not in allowed:
                self.fail(key, f"unknown field (allowed: {', '.join(sorted(allowed))})")

    def _get(self, key: str, kind: type, default: object = None) -> object:
        value = self.data.get(key, default)
        if value is None:
            self.fail(key, f"missing (expected {_TYPE_NAMES[kind]})")
        if type(value) is not kind:
            self.fail(key, f"expected {_TYPE_NAMES[kind]}, got {_describe(value)}")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        """A non-empty string (or `default` when the key is absent)."""
        value = str(self._get(key, str, default))
        if not value.strip() and default is None:
            self.fail(key, "must not be empty")
        return value.strip()

    def optional_text(self, key: str) -> str | None:
        """A string, or None when the key is absent."""
        return self.text(key) if key in self.data else None

    def flag(self, key: str, default: bool) -> bool:
        """A boolean (or `default` when the key is absent)."""
        return bool(self._get(key, bool, default))

    def texts(self, key: str) -> tuple[str, ...]:
        """An array of strings; absent means empty."""
        values = self._get(key, list, [])
        assert isinstance(values, list)
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise ProfileError(
                    f"{self.source}: {self.where(key)}[{index}]: "
                    f"expected a string, got {_describe(value)}"
                )
        return tuple(value.strip() for value in values)

    def table(self, key: str, *, required: bool = True) -> Node:
        """A sub-table; absent is an error unless `required` is False (then it is empty)."""
        value = self._get(key, dict, None if required else {})
        assert isinstance(value, dict)
        return Node(value, self.where(key), self.source)

    def tables(self, key: str) -> tuple[Node, ...]:
        """An array of tables (`[[key]]`); absent means empty."""
        values = self._get(key, list, [])
        assert isinstance(values, list)
        nodes = []
        for index, value in enumerate(values):
            path = f"{self.where(key)}[{index}]"
            if not isinstance(value, dict):
                raise ProfileError(
                    f"{self.source}: {path}: expected a table, got {_describe(value)}"
                )
            nodes.append(Node(value, path, self.source))
        return tuple(nodes)
