"""Each delivery channel's schema.sql is what its own migrations add to the core's schema
(taskqueue/store/schema_dump.py), so a reader finds a channel's tables in one file."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue.store import schema_dump
from tests.conftest import ADMIN_DSN

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("channel", ["telegram", "web", "api"])
def test_a_channel_schema_matches_its_migrations(channel: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the file's header names the paths from the checkout's top
    schema = schema_dump.Schema(Path("bot", channel, "schema.sql"),
                                Path("bot", channel, "migrations"), channel)
    problem = schema_dump.check(ADMIN_DSN, schema)
    assert problem is None, problem
