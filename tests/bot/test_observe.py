"""/healthz and /metrics over real HTTP: the service's, its 503s, and the [http] table."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from psycopg_pool import AsyncConnectionPool

from bot.observe import http_settings, scheduler_check
from bot.service import Service
from taskqueue import (
    ConfigError,
    Decision,
    ObservabilityServer,
    TaskQueue,
    load_config,
    reaper_check,
)
from tests.bot.conftest import park
from tests.bot.test_service import CONFIG
from tests.taskqueue.worker_helpers import wait_for, wait_status

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def get(url: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, response.headers["Content-Type"], await response.text()


def samples(text: str) -> Samples:
    """Every sample of a /metrics page, keyed by name and labels."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: Samples, name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


@pytest.fixture
async def service(dsn: str, tmp_path: Path) -> AsyncIterator[Service]:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + '\n[http]\nlisten = "127.0.0.1:0"\n')
    running = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await running.start()
    yield running
    await running.stop()


async def healthy(base: str) -> bool:
    return (await get(f"{base}/healthz"))[0] == 200


async def test_the_service_serves_health_and_metrics_from_the_database(
        service: Service, queue: TaskQueue) -> None:
    assert service.http is not None
    base = f"http://127.0.0.1:{service.http.port}"
    await wait_for(lambda: healthy(base), timeout=10)  # the reaper runs at start
    status, kind, body = await get(f"{base}/healthz")
    assert (status, kind.split(";")[0]) == (200, "application/json")
    assert '"database": "ok"' in body and '"reaper": "ok"' in body and '"scheduler": "ok"' in body
    done = await queue.task_enqueue("mail", {})
    await wait_status(queue, done.id, "succeeded", timeout=5)
    waiting, decided = await park(queue), await park(queue, capability="cv2")
    await queue.approval_decide(decided.id, Decision.APPROVED, "alice")
    status, kind, text = await get(f"{base}/metrics")
    assert status == 200 and kind.startswith("text/plain")
    m = samples(text)
    assert value(m, "signoff_database_up") == 1
    assert value(m, "signoff_tasks", capability="mail", status="succeeded") == 1
    assert value(m, "signoff_tasks", capability="jobs", status="needs_approval") == 1
    assert value(m, "signoff_approvals_open") == 1 and waiting.id
    assert value(m, "signoff_decisions_total", decision="approved") == 1
    assert (value(m, "signoff_claimable_tasks", capability="cv2") or 0) == 1
    assert (value(m, "signoff_claimable_oldest_age_seconds", capability="cv2") or -1) >= 0
    assert (value(m, "signoff_reaper_runs_total") or 0) >= 1
    assert value(m, "signoff_reaper_rescued_total", kind="requeued") == 0
    assert value(m, "signoff_signal_firing", signal="incident") == 0
    assert value(m, "signoff_handler_duration_seconds_count", capability="mail",
                 outcome="done") == 1
    assert value(m, "signoff_handler_duration_seconds_bucket", capability="mail",
                 outcome="done", le="+Inf") == 1


async def test_a_stale_reaper_makes_the_service_unhealthy(
        service: Service, dsn: str) -> None:
    assert service.http is not None
    base = f"http://127.0.0.1:{service.http.port}"
    await wait_for(lambda: healthy(base), timeout=10)
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("UPDATE reaper_runs SET at = now() - interval '11 minutes'")
    status, _, body = await get(f"{base}/healthz")
    assert status == 503 and '"failing": ["reaper"]' in body
    assert "the reaper last ran 660s ago; it runs every 300s" in body
    m = samples((await get(f"{base}/metrics"))[2])
    assert (value(m, "signoff_reaper_last_run_age_seconds") or 0) >= 660


@pytest.fixture
async def server(queue: TaskQueue) -> AsyncIterator[ObservabilityServer]:
    checks: dict[str, Any] = {"reaper": reaper_check(queue, 60),
                              "scheduler": scheduler_check(lambda: False)}
    running = ObservabilityServer(queue, "127.0.0.1:0", checks=checks, timeout=1)
    await running.start()
    yield running
    await running.stop()


async def test_a_reaper_that_never_ran_and_a_stopped_scheduler_are_named(
        server: ObservabilityServer) -> None:
    status, _, body = await get(f"http://127.0.0.1:{server.port}/healthz")
    assert status == 503 and '"failing": ["reaper", "scheduler"]' in body
    assert "the reaper has never run" in body and "the scheduler is not running" in body
    assert '"database": "ok"' in body


async def test_a_database_that_does_not_answer_is_a_503_and_database_up_0() -> None:
    pool = AsyncConnectionPool("host=127.0.0.1 port=1 user=postgres connect_timeout=1",
                               open=False, min_size=0, max_size=2, timeout=30)
    await pool.open(wait=False)
    down = ObservabilityServer(TaskQueue(pool), "127.0.0.1:0", timeout=1)
    await down.start()
    try:
        status, _, body = await get(f"http://127.0.0.1:{down.port}/healthz")
        metrics_status, _, text = await get(f"http://127.0.0.1:{down.port}/metrics")
    finally:
        await down.stop()
        await pool.close()
    assert status == 503 and '"failing": ["database"]' in body and "within 1s" in body
    m = samples(text)
    assert metrics_status == 200 and value(m, "signoff_database_up") == 0
    assert value(m, "signoff_tasks", capability="mail", status="pending") is None


def test_the_http_table_is_checked_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text('timezone = "UTC"\n\n[http]\nlisten = "localhost"\n')
    with pytest.raises(ConfigError, match=r"line 4: http.listen: must be HOST:PORT"):
        http_settings(load_config(path, env={}))
    path.write_text('[http]\nlisten = "127.0.0.1:9464"\nport = 1\n')
    with pytest.raises(ConfigError, match=r"line 3: http.port: unknown key"):
        http_settings(load_config(path, env={}))
    path.write_text('[http]\nlisten = "127.0.0.1:9464"\n')
    assert http_settings(load_config(path, env={})) == ("127.0.0.1:9464", 5.0)
    # No table, or no listen: "auto" (the default address or a free port); "off": none.
    path.write_text('timezone = "UTC"\n')
    assert http_settings(load_config(path, env={}))[0] == "auto"
    path.write_text('[http]\nscrape_timeout_seconds = 2\n')
    assert http_settings(load_config(path, env={})) == ("auto", 2.0)
    path.write_text('[http]\nlisten = "off"\n')
    assert http_settings(load_config(path, env={}))[0] is None
    path.write_text('[http]\nlisten = "Auto"\n')
    assert http_settings(load_config(path, env={}))[0] == "auto"
