"""The named queries of sql/*.sql: one block per name across the files, and every name the
code runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import taskqueue
from taskqueue.store.queries import load, merge, parse


def test_parse_splits_named_blocks_and_drops_trailing_comments() -> None:
    text = ("-- header\n-- name: a\nSELECT 1;\n\n-- name: b\nSELECT %(x)s;\n"
            "-- The next section mentions %(y)s in a comment.\n")
    assert parse(text) == {"a": "SELECT 1", "b": "SELECT %(x)s"}


def test_parse_refuses_a_name_defined_twice() -> None:
    with pytest.raises(ValueError, match="twice"):
        parse("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n")


def test_every_query_the_code_runs_is_defined() -> None:
    package = Path(taskqueue.__file__).parent
    pattern = re.compile(r'(?:query\(|_(?:one|all|fenced)\(\s*conn,\s*)"(\w+)"')
    used = {name for path in package.rglob("*.py") for name in pattern.findall(path.read_text())}
    names = load()
    assert {"task_claim", "task_enqueue", "task_fail"} <= used
    assert all(sql.strip() for sql in names.values())
    assert used <= set(names)


def test_merge_refuses_a_name_defined_in_two_files() -> None:
    with pytest.raises(ValueError, match=r"a\.sql and b\.sql"):
        merge({"a.sql": "-- name: x\nSELECT 1;\n", "b.sql": "-- name: x\nSELECT 2;\n"})


def test_every_named_query_is_unique_across_the_area_files() -> None:
    folder = Path(taskqueue.__file__).parent / "store" / "sql"
    files = sorted(folder.glob("*.sql"))
    assert {f.stem for f in files} >= {"claim", "decisions", "notifications", "reads",
                                       "maintenance"}
    names = [name for f in files for name in parse(f.read_text())]
    assert len(names) == len(set(names)) == len(load())
