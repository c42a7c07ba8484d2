"""The outside-command runner, with real processes: exit codes, a bounded log and tail, the
whole process group (grandchildren too) killed at the timeout, on cancellation and on a
lost heartbeat, and the environment's secrets never in the runner's own words."""

from __future__ import annotations

import ast
import asyncio
import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskqueue import CommandError, CommandResult, run_command
from tests.taskqueue.cli_helpers import ROOT
from tests.timing import WAIT, patience

# A child and a grandchild that sleep; the grandchild's pid goes to argv[1], then
# "started" is printed and the command sleeps too (ignoring SIGTERM with argv[2] == "stubborn").
FAMILY = """
import pathlib, signal, subprocess, sys, time
if sys.argv[2:] == ["stubborn"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = ("import subprocess, sys, time; "
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
              "print(p.pid, flush=True); time.sleep(600)")
child = subprocess.Popen([sys.executable, "-c", grandchild], stdout=subprocess.PIPE, text=True)
pathlib.Path(sys.argv[1]).write_text(child.stdout.readline().strip())
print("started", flush=True)
time.sleep(600)
"""
SECRET = "hunter2-never-shown"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def _gone(pid: int) -> bool:
    """Whether the process is dead (or a zombie) within the suite's limit."""
    deadline = time.monotonic() + WAIT
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def _run(tmp_path: Path, code: str, *args: str, **options: object) -> CommandResult:
    options.setdefault("timeout", WAIT)
    return await run_command([sys.executable, "-c", code, *args], cwd=tmp_path,
                             log=tmp_path / "out.log", env={"PATH": "/usr/bin:/bin"},
                             **options)  # type: ignore[arg-type]


async def _grandchild(pid_file: Path) -> int:
    deadline = time.monotonic() + WAIT
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the command did not start its grandchild"
        await asyncio.sleep(0.02)
    return int(pid_file.read_text())


async def test_exit_codes_come_back_and_only_zero_is_ok(tmp_path: Path) -> None:
    ok = await _run(tmp_path, "print('fine')")
    assert ok.ok and ok.exit_code == 0 and ok.stopped is None and ok.text() == "fine\n"
    bad = await _run(tmp_path, "import sys; print('broke'); sys.exit(3)")
    assert not bad.ok and bad.exit_code == 3 and not bad.timed_out
    assert (tmp_path / "out.log").read_text() == "broke\n" and bad.log == tmp_path / "out.log"


@pytest.mark.parametrize("mode", ["polite", "stubborn"])
async def test_a_command_past_its_timeout_is_killed_with_its_grandchild(
        tmp_path: Path, mode: str) -> None:
    pid_file = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = await _run(tmp_path, FAMILY, str(pid_file), mode, timeout=patience(3),
                        term_grace=0.5)
    assert result.timed_out and result.stopped == "timeout" and result.exit_code is None
    assert not result.ok and "started" in result.text()
    assert time.monotonic() - started < WAIT
    assert await _gone(await _grandchild(pid_file)), "the grandchild outlived the timeout"


async def test_cancellation_stops_the_group_and_says_so(tmp_path: Path) -> None:
    pid_file, cancelled = tmp_path / "grandchild.pid", asyncio.Event()
    run = asyncio.create_task(_run(tmp_path, FAMILY, str(pid_file), cancelled=cancelled))
    grandchild = await _grandchild(pid_file)
    cancelled.set()
    result = await run
    assert result.stopped == "cancelled" and result.exit_code is None and not result.timed_out
    assert await _gone(grandchild)


async def test_a_heartbeat_that_raises_kills_the_group_and_propagates(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"

    class Lost(Exception):
        pass

    async def lost() -> None:  # the lease is lost once the grandchild runs
        if pid_file.exists() and pid_file.read_text():
            raise Lost

    with pytest.raises(Lost):
        await _run(tmp_path, FAMILY, str(pid_file), heartbeat=lost, heartbeat_every=0.05)
    assert await _gone(int(pid_file.read_text()))


async def test_the_callers_cancellation_kills_the_group_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    run = asyncio.create_task(_run(tmp_path, FAMILY, str(pid_file)))
    grandchild = await _grandchild(pid_file)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await _gone(grandchild)


async def test_output_is_bounded_in_the_log_and_in_memory(tmp_path: Path) -> None:
    loud = "import sys\nfor _ in range(50_000): sys.stdout.write('x' * 99 + '\\n')\nprint('END')"
    result = await _run(tmp_path, loud, max_log_bytes=100_000, tail_bytes=1000)
    assert result.ok and result.truncated
    assert result.output_bytes == 50_000 * 100 + 4 and result.log_bytes == 100_000
    assert len(result.tail) == 1000 and result.text().endswith("END\n")
    log = (tmp_path / "out.log").read_bytes()
    assert 100_000 < len(log) < 100_100 and log.endswith(b"[signoff: log cut at 100000 bytes]\n")
    # Cut to its last bytes, the text starts at a whole line.
    assert result.text(150) == "x" * 99 + "\nEND\n"


async def test_a_command_gets_exactly_its_env_and_a_secret_stays_out_of_our_words(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    env = {"PATH": "/usr/bin:/bin", "SIGNOFF_TOKEN": SECRET}
    with pytest.raises(CommandError) as missing:
        await run_command(["no-such-tool-here", SECRET], cwd=tmp_path, log=tmp_path / "m.log",
                          env=env, timeout=5)
    assert "cannot start 'no-such-tool-here'" in str(missing.value)
    said = await run_command(
        [sys.executable, "-c",
         "import os, time; print(sorted(os.environ), flush=True); time.sleep(60)"],
        cwd=tmp_path, log=tmp_path / "out.log", env=env, timeout=patience(2),
        max_log_bytes=10)
    assert said.timed_out and said.truncated
    # Exactly `env` (Python itself may add LC_CTYPE), none of this process's own.
    assert set(ast.literal_eval(said.text())) - {"LC_CTYPE"} == {"PATH", "SIGNOFF_TOKEN"}
    words = [str(missing.value), (tmp_path / "out.log").read_text(), said.text(), caplog.text,
             (tmp_path / "m.log").read_text()]
    assert not [w for w in words if SECRET in w]


PARENT = """
import asyncio, sys
from pathlib import Path
from taskqueue import run_command
asyncio.run(run_command([sys.executable, "-c", "import time; print('up', flush=True); "
                         "time.sleep(600)"], cwd=Path(sys.argv[1]), env={},
                        log=Path(sys.argv[1]) / "c.log", timeout=600, die_with_parent=True,
                        on_start=lambda pid: print(pid, flush=True)))
"""


async def test_die_with_parent_takes_the_command_when_the_worker_is_killed(
        tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), WAIT))
        parent.kill()
        assert await asyncio.to_thread(parent.wait, WAIT) == -9
        assert await _gone(child), "the command outlived its killed parent"
    finally:
        parent.kill()
        parent.wait(WAIT)
        if parent.stdout is not None:
            parent.stdout.close()
