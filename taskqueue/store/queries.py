"""Loads the named queries of sql/queries.sql once into a dict keyed by name."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    """Split a file of `-- name: x` blocks into {name: sql}."""
    parts = _NAME.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name} is defined twice")
        queries[name] = _strip_trailing_comments(body).rstrip(";")
    return queries


def _strip_trailing_comments(body: str) -> str:
    # Comments after a query's last statement introduce the next section, not this
    # query; psycopg would read placeholders written in them as the query's own.
    lines = body.strip().splitlines()
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("--")):
        lines.pop()
    return "\n".join(lines).strip()


@cache
def load() -> dict[str, str]:
    """All runtime queries, read from the package once."""
    text = resources.files(__package__).joinpath("sql", "queries.sql").read_text("utf-8")
    return parse(text)


def query(name: str) -> str:
    """The SQL of one named query."""
    return load()[name]
