"""Runs an outside command (the agent, the tests) in its own process group: killed whole on
timeout, cancellation or lease loss; its output goes to a log file and only a bounded tail
is kept in memory, however much it prints."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CommandResult", "Interrupted", "kill_marked", "run_command"]

CHUNK = 64 * 1024
MARK_ENV = "SIGNOFF_CODE_RUN"
_PR_SET_PDEATHSIG = 1

def _prctl() -> Any:
    """Linux's prctl: a child can ask the kernel to SIGKILL it when its parent dies."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None


_PRCTL = _prctl()


class Interrupted(Exception):
    """The command was stopped because the slice was asked to stop (shutdown, lease loss)."""


@dataclass(frozen=True)
class CommandResult:
    """How a command ended: `exit_code` None when it was killed at its timeout."""

    exit_code: int | None
    tail: str
    output_bytes: int
    seconds: float
    log: Path

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def _die_with_parent() -> None:
    # Runs in the child between fork and exec. The process group is still killed by us or
    # by the next slice (kill_marked); this only covers the direct child at once.
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries `SIGNOFF_CODE_RUN=mark`: what is left
    of a run whose worker died. Returns how many were signalled."""
    needle = f"{MARK_ENV}={mark}".encode()
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\x00"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


class _Output:
    """The command's output: all of it to the log (up to a limit), the last bytes in memory."""

    def __init__(self, log: Path, tail_bytes: int, log_max: int) -> None:
        self.file = log.open("wb")
        self.tail = bytearray()
        self.tail_bytes, self.log_max, self.total = tail_bytes, log_max, 0

    def add(self, chunk: bytes) -> None:
        if self.total < self.log_max:
            self.file.write(chunk[: self.log_max - self.total])
            if self.total + len(chunk) >= self.log_max:
                self.file.write(b"\n[signoff: log cut at the log_max_bytes limit]\n")
        self.total += len(chunk)
        self.tail += chunk
        if len(self.tail) > self.tail_bytes:
            del self.tail[: len(self.tail) - self.tail_bytes]

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(CHUNK):
            self.add(chunk)

    def close(self) -> str:
        self.file.close()
        return self.tail.decode("utf-8", "replace")


async def run_command(argv: list[str], *, cwd: Path, log: Path, timeout: float,
                      env: Mapping[str, str], mark: str, tail_bytes: int = 64 * 1024,
                      log_max: int = 256 * 1024 * 1024,
                      heartbeat: Callable[[], Awaitable[None]] | None = None,
                      heartbeat_every: float = 10.0,
                      cancelled: asyncio.Event | None = None) -> CommandResult:
    """Run `argv` (no shell) until it exits or `timeout` passes; Interrupted when `cancelled`
    is set. Whatever happens, the whole process group is killed before this returns."""
    started = time.monotonic()
    out = _Output(log, tail_bytes, log_max)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env={**env, MARK_ENV: mark}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent)
    except OSError as exc:
        out.add(f"[signoff: cannot start {argv[0]}: {exc.strerror or exc}]\n".encode())
        return CommandResult(127, out.close(), out.total, 0.0, log)
    assert proc.stdout is not None
    reader = asyncio.create_task(out.drain(proc.stdout))
    try:
        code = await _wait(proc, started + timeout, heartbeat, heartbeat_every, cancelled)
    finally:
        kill_group(proc.pid)  # leftovers of the group too, also on cancel and errors
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(reader, 5)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(proc.wait(), 5)
        tail = out.close()
    return CommandResult(code, tail, out.total, time.monotonic() - started, log)


async def _wait(proc: asyncio.subprocess.Process, deadline: float,
                heartbeat: Callable[[], Awaitable[None]] | None, every: float,
                cancelled: asyncio.Event | None) -> int | None:
    """The exit code; None at the deadline. Heartbeats between checks."""
    exited = asyncio.create_task(proc.wait())
    stop = asyncio.create_task((cancelled or asyncio.Event()).wait())
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            await asyncio.wait({exited, stop}, timeout=min(every, left),
                               return_when=asyncio.FIRST_COMPLETED)
            if exited.done():
                return exited.result()
            if stop.done():
                raise Interrupted("stopped: the worker is shutting down or lost the task")
            if heartbeat is not None:
                await heartbeat()
    finally:
        for t in (exited, stop):
            t.cancel()
