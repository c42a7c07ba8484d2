"""The service serves the web inbox on its [http] listener, and refuses a public address
while no account exists."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from bot.service import Service
from bot.web.channel import CHANNEL
from taskqueue import ConfigError, load_config
from tests.bot.conftest import park
from tests.bot.test_service import CONFIG


async def test_the_service_mounts_the_inbox_beside_healthz_and_it_is_a_channel(
        dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + '\n[http]\nlisten = "127.0.0.1:0"\n')
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await service.start()
    try:
        assert service.http is not None and service.queue is not None
        base = f"http://127.0.0.1:{service.http.port}"
        approval = await park(service.queue)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/healthz") as health:
                assert health.status in (200, 503)
            async with session.get(f"{base}/inbox.json") as inbox:
                assert inbox.status == 401
                assert inbox.headers["X-Content-Type-Options"] == "nosniff"
            async with session.get(f"{base}/login") as login:
                assert login.status == 200 and "Sign in" in await login.text()
        rows = await service.queue.notification_list(task_id=approval.task_id)
        assert CHANNEL in {r["channel"] for r in rows}
    finally:
        await service.stop()


async def test_a_public_listener_with_no_account_refuses_to_start(
        dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG + '\n[http]\nlisten = "0.0.0.0:0"\n')
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    try:
        with pytest.raises(ConfigError, match="no account; add one with `signoff web user"):
            await service.start()
    finally:
        await service.stop()
    path.write_text(CONFIG + '\n[http]\nlisten = "0.0.0.0:0"\n\n[web]\nenabled = false\n')
    service = Service(load_config(path, env={}), dsn=dsn, telegram=None)
    await service.start()
    await service.stop()
