"""Crash points: nothing happens unless the variable names the point; with a marker folder a
point fires once, in a real process that dies by SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import asyncio
from taskqueue import env_crash_points
point = env_crash_points("T")
async def main():
    await point("a")
    print("passed a", flush=True)
    await point("b")
    print("passed b", flush=True)
asyncio.run(main())
"""


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT], env={"PATH": "/usr/bin"} | env,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("named", [None, "c"], ids=["unset", "another-point"])
def test_an_unset_point_does_nothing(tmp_path: Path, named: str | None) -> None:
    """With no point named, or another one, every point passes, in a real process, and no
    marker is written."""
    env = {"T_CRASH_DIR": str(tmp_path)} | ({"T_CRASH_AT": named} if named else {})
    done = _run(env)
    assert (done.returncode, done.stdout) == (0, "passed a\npassed b\n"), done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_named_point_kills_the_process_once_per_marker_folder(tmp_path: Path) -> None:
    env = {"T_CRASH_AT": "b", "T_CRASH_DIR": str(tmp_path)}
    first = _run(env)
    assert first.returncode == -signal.SIGKILL and first.stdout == "passed a\n"
    again = _run(env)
    assert again.returncode == 0 and again.stdout == "passed a\npassed b\n"
    assert _run({"T_CRASH_AT": "a"}).returncode == -signal.SIGKILL
