"""A long-running `signoff` command stopped while it starts: started as a process, held at a
point of its start by the test (a slow import, a lock), sent SIGTERM there, then let go."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import psycopg

from tests.timing import limit

ROOT = Path(__file__).resolve().parent.parent


async def stopped_while_starting(args: list[str], env: Mapping[str, str], log: Path,
                                 starting: Callable[[], Awaitable[bool]],
                                 release: Callable[[], Awaitable[None]]) -> int:
    """Start `signoff ARGS` (its output in `log`), SIGTERM it once `starting()` says it is
    held in its start, then `release()` what holds it there; its exit code."""
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "taskqueue", *args], cwd=ROOT,
                                env=dict(env), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + limit(30)
        while not await starting():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        await release()
        return await asyncio.to_thread(proc.wait, limit(30))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def waits_for_a_lock(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether a server process of this connection's database waits for a lock."""
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock')")
    row = await cur.fetchone()
    return bool(row and row[0])
