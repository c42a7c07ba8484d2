"""Loads the named queries of sql/queries.sql once into a dict keyed by name."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    """Split a file of `-- name: x` blocks into {name: sql}."""
    parts = _NAME.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name} is defined twice")
        queries[name] = body.strip().rstrip(";")
    return queries


@cache
def load() -> dict[str, str]:
    """All runtime queries, read from the package once."""
    text = (Path(__file__).parent / "sql" / "queries.sql").read_text("utf-8")
    return parse(text)


def query(name: str) -> str:
    """The SQL of one named query."""
    return load()[name]
