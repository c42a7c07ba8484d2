"""The command runner: exit codes, a bounded log and tail, and whole process groups killed."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from taskqueue import CommandError, run_command
from tests.timing import limit
from workloads.builds.environment import clean_env

from .conftest import FAKE_BUILD


async def _run(tmp_path: Path, mode: str, *, timeout: float = 10,
               cancelled: asyncio.Event | None = None, max_log: int = 1_000_000,
               heartbeat: object = None) -> object:
    (tmp_path / "place.txt").write_text("p")
    return await run_command([sys.executable, FAKE_BUILD, mode, str(tmp_path / "out.rbxl")],
                             cwd=tmp_path, log=tmp_path / "build.log", env=clean_env(),
                             timeout=timeout, cancelled=cancelled or asyncio.Event(),
                             max_log_bytes=max_log, tail_bytes=2000,
                             heartbeat=heartbeat, heartbeat_every=0.1)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat.split(") ")[1].startswith("Z")


async def gone(pid: int, timeout: float | None = None) -> bool:
    """Whether the process is dead (or a zombie) within the suite's limit (a SIGKILL is async)."""
    deadline = time.monotonic() + limit(timeout)
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_a_fast_build_succeeds_and_a_failing_one_reports_its_code(tmp_path: Path) -> None:
    ok = await _run(tmp_path, "fast")
    assert ok.ok and b"wrote out.rbxl" in ok.tail  # type: ignore[attr-defined]
    bad = await _run(tmp_path, "fail")
    assert not bad.ok and bad.exit_code == 3  # type: ignore[attr-defined]
    assert b"Main.swift" in (tmp_path / "build.log").read_bytes()


async def test_a_hanging_build_is_killed_with_its_children_at_the_timeout(
        tmp_path: Path) -> None:
    started = time.monotonic()
    result = await _run(tmp_path, "hang", timeout=2)
    assert result.stopped == "timeout" and time.monotonic() - started < 10  # type: ignore
    child = int((tmp_path / "out.rbxl.child").read_text())
    assert await gone(child), "the build's child survived"


async def test_cancellation_kills_the_group_and_a_failing_heartbeat_propagates(
        tmp_path: Path) -> None:
    child = tmp_path / "out.rbxl.child"
    cancelled = asyncio.Event()

    async def cancel_once_running() -> None:
        while not child.exists():
            await asyncio.sleep(0.05)
        cancelled.set()

    canceller = asyncio.create_task(cancel_once_running())
    result = await _run(tmp_path, "hang", cancelled=cancelled)
    await canceller
    assert result.stopped == "cancelled"  # type: ignore[attr-defined]
    assert await gone(int(child.read_text()))

    class Lost(Exception):
        pass

    child.unlink()

    async def lost() -> None:  # the lease is lost once the build really runs
        if child.exists():
            raise Lost

    with pytest.raises(Lost):
        await _run(tmp_path, "hang", heartbeat=lost)
    assert await gone(int(child.read_text()))


async def test_a_noisy_build_fills_neither_the_disk_nor_memory(tmp_path: Path) -> None:
    result = await _run(tmp_path, "noisy", max_log=100_000)
    assert result.ok and result.truncated  # type: ignore[attr-defined]
    assert len(result.tail) == 2000 and b"wrote out.rbxl" in result.tail  # type: ignore
    size = (tmp_path / "build.log").stat().st_size
    assert 100_000 <= size < 100_200


async def test_a_missing_tool_is_a_clear_error_and_secrets_stay_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CommandError, match="cannot start 'xcodebuild-nowhere'"):
        await run_command(["xcodebuild-nowhere"], cwd=tmp_path, log=tmp_path / "l",
                          env=clean_env(), timeout=5, cancelled=asyncio.Event(),
                          max_log_bytes=100, tail_bytes=100)
    monkeypatch.setenv("SIGNOFF_ROBLOX_API_KEY", "k")
    monkeypatch.setenv("DATABASE_URL", "postgresql://x")
    assert not {"SIGNOFF_ROBLOX_API_KEY", "DATABASE_URL"} & set(clean_env())
