"""Running the agent: a bounded tail however much it prints, the whole group killed at the
timeout and on cancellation, no shell anywhere, and templates filled per argv element."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from tests.timing import WAIT, patience
from workloads.code_changes.marked import Interrupted, kill_marked, run_marked
from workloads.code_changes.settings import render_command

from .agents import LOUD
from .conftest import pid_alive

GROUP = """
import subprocess, sys, time, pathlib
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
pathlib.Path(sys.argv[1]).write_text(str(child.pid))
print("started", flush=True)
time.sleep(60)
"""


async def test_an_agent_printing_50_mb_keeps_a_bounded_tail_and_the_full_log(
        tmp_path: Path) -> None:
    script = tmp_path / "loud.py"
    script.write_text(LOUD)
    result = await run_marked([sys.executable, str(script)], cwd=tmp_path,
                              log=tmp_path / "loud.log", timeout=30, env={}, mark="t-loud",
                              tail_bytes=4096)
    assert result.ok and result.output_bytes > 50 * 1024 * 1024
    assert len(result.tail) <= 4096 and result.text().endswith("LAST LINE\n")
    assert (tmp_path / "loud.log").stat().st_size == result.output_bytes


async def test_the_log_file_stops_at_its_limit(tmp_path: Path) -> None:
    script = tmp_path / "loud.py"
    script.write_text(LOUD)
    result = await run_marked([sys.executable, str(script)], cwd=tmp_path,
                              log=tmp_path / "loud.log", timeout=30, env={}, mark="t-cut",
                              tail_bytes=1024, max_log_bytes=1024 * 1024)
    text = (tmp_path / "loud.log").read_bytes()
    assert len(text) < 1024 * 1024 + 200 and b"log cut" in text
    assert result.text().endswith("LAST LINE\n")


async def _group(tmp_path: Path, **options: object) -> tuple[asyncio.Task, int]:
    script, pid_file = tmp_path / "group.py", tmp_path / "child.pid"
    script.write_text(GROUP)
    run = asyncio.create_task(run_marked(
        [sys.executable, str(script), str(pid_file)], cwd=tmp_path, log=tmp_path / "g.log",
        env={}, mark=f"t-{tmp_path.name}", **options))  # type: ignore[arg-type]
    deadline = time.monotonic() + WAIT
    while not (pid_file.exists() and pid_file.read_text()):
        if time.monotonic() > deadline:
            raise AssertionError("the agent did not start")
        await asyncio.sleep(0.02)
    return run, int(pid_file.read_text())


async def _dies(pid: int) -> None:
    """A SIGKILL lands asynchronously: wait (within the suite's limit) for the process to go."""
    deadline = time.monotonic() + WAIT
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"process {pid} outlived its group's kill"
        await asyncio.sleep(0.05)


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    # Room for two interpreters to start on a busy machine before the timeout strikes.
    run, child = await _group(tmp_path, timeout=patience(3))
    result = await run
    assert result.timed_out and not result.ok and "started" in result.text()
    await _dies(child)


async def test_cancelled_stops_the_agent_and_its_children(tmp_path: Path) -> None:
    stop = asyncio.Event()
    beats: list[int] = []

    async def beat() -> None:
        beats.append(1)

    run, child = await _group(tmp_path, timeout=30, cancelled=stop, heartbeat=beat,
                              heartbeat_every=0.1)
    deadline = time.monotonic() + WAIT
    while len(beats) < 2:
        assert time.monotonic() < deadline, "the agent's run never beat twice"
        await asyncio.sleep(0.05)
    stop.set()
    with pytest.raises(Interrupted):
        await run
    await _dies(child)


async def test_task_cancellation_kills_the_group_too(tmp_path: Path) -> None:
    run, child = await _group(tmp_path, timeout=30)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    await _dies(child)


async def test_kill_marked_finds_processes_by_their_environment_mark(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(60)",
        env={"SIGNOFF_CODE_RUN": "mark-a"})
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(60)",
        env={"SIGNOFF_CODE_RUN": "mark-b"})
    await asyncio.sleep(0.2)
    assert kill_marked("mark-a") == 1
    assert await asyncio.wait_for(proc.wait(), 5) == -9
    assert other.returncode is None
    other.kill()
    await other.wait()


def test_templates_fill_each_element_and_never_reinterpret_the_instruction() -> None:
    nasty = "x'; rm -rf / #{worktree} $(id) `id`"
    argv = render_command(("agent", "--prompt={instruction}", "-C", "{worktree}", "{{x}}"),
                          {"instruction": nasty, "worktree": "/w"})
    assert argv == ["agent", f"--prompt={nasty}", "-C", "/w", "{{x}}"]


async def test_a_missing_agent_is_exit_127_not_a_crash(tmp_path: Path) -> None:
    result = await run_marked(["/nonexistent/agent"], cwd=tmp_path, log=tmp_path / "x.log",
                              timeout=5, env={}, mark="t-missing")
    assert result.exit_code == 127 and "cannot start" in result.text()
