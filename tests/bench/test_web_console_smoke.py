"""bench.task_list and bench.web_inbox run end to end on a small load and print their JSON
(issue 41); the figures are reported, never checked."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest

from bench import task_list, web_inbox
from tests.conftest import ADMIN_DSN

pytestmark = pytest.mark.slow


def _gone(name: str) -> bool:
    with psycopg.connect(ADMIN_DSN) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone() is None


def test_task_list_times_a_page_of_each_filter() -> None:
    name = f"signoff_bench_tl_{uuid.uuid4().hex[:10]}"
    doc = asyncio.run(task_list.main(["--dsn", ADMIN_DSN, "--database", name,
                                      "--rows", "3000", "--runs", "1"]))
    assert doc["load"]["finished_rows"] == 3000 and doc["load"]["table_rows"] == 5000
    pages = doc["pages"]
    assert set(task_list.cases()) < set(pages)
    assert pages["status failed"]["rows"] == 51 and pages["search, no match"]["rows"] == 0
    assert all(p["median_ms"] > 0 for p in pages.values())
    assert _gone(name)


def test_web_inbox_loads_the_first_page_in_chromium() -> None:
    name = f"signoff_bench_wi_{uuid.uuid4().hex[:10]}"
    doc = asyncio.run(web_inbox.main(["--dsn", ADMIN_DSN, "--database", name,
                                      "--approvals", "30", "--runs", "1"]))
    assert doc["cards_on_the_page"] == 25 and doc["open_count_shown"] == "30"
    assert doc["chromium_load_ms"] > 0 and doc["server_ttfb_ms"]["/"] > 0
    assert _gone(name)
