"""Fixtures for the briefing tests: a config file in SIGNOFF_CONFIG and a seeded database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from taskqueue import TaskQueue
from tests.bot.fake_telegram import FakeTelegram

from .seed import Seeded, seed, write_config


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = write_config(tmp_path)
    monkeypatch.setenv("SIGNOFF_CONFIG", str(path))
    return path


@pytest.fixture
def today() -> date:
    return datetime.now(UTC).date()


@pytest.fixture
async def seeded(queue: TaskQueue, today: date) -> Seeded:
    return await seed(queue, today)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    """The fake Telegram Bot API on 127.0.0.1 (tests/bot/fake_telegram.py)."""
    server = FakeTelegram()
    await server.start()
    yield server
    await server.stop()
