"""Loads the named queries of every sql/*.sql file once into one dict keyed by name."""

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


def merge(files: dict[str, str]) -> dict[str, str]:
    """The queries of several files ({file name: text}) in one dict; a name is unique across
    them all (ValueError naming both files otherwise)."""
    queries: dict[str, str] = {}
    where: dict[str, str] = {}
    for file_name, text in sorted(files.items()):
        for name, sql in parse(text).items():
            if name in queries:
                raise ValueError(f"query {name} is defined in {where[name]} and {file_name}")
            queries[name], where[name] = sql, file_name
    return queries


@cache
def load() -> dict[str, str]:
    """All runtime queries, read from the package's sql/*.sql files once (one file per area:
    claim, worker, decisions, reads, notifications, maintenance, ...)."""
    folder = resources.files(__package__).joinpath("sql")
    return merge({f.name: f.read_text("utf-8") for f in folder.iterdir()
                  if f.name.endswith(".sql")})


def query(name: str) -> str:
    """The SQL of one named query."""
    return load()[name]
