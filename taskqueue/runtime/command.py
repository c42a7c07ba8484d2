"""Runs one outside command (a build, an upload, an agent, a test run) in its own process
group: its output streamed to a bounded log file with a bounded tail kept in memory,
heartbeats while it runs, and the whole group killed at the timeout, on cancellation
(shutdown, lease loss) or on any error of ours, before `run_command` returns.

The runner writes nothing of the command's environment anywhere: its own words in the log
and in its errors name only the program (argv[0]) and the limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CommandError", "CommandResult", "kill_group", "run_command"]

CHUNK = 64 * 1024
# After SIGTERM to the group, how long before SIGKILL (seconds), unless the caller says.
TERM_GRACE = 3.0
# How long to wait for a killed process to be reaped (seconds).
KILL_WAIT = 5.0
# How long the output may keep flowing after the group was killed (a child that left the
# group and still holds the pipe); the reading then stops.
DRAIN_SECONDS = 5.0
TAIL_BYTES = 64 * 1024
MAX_LOG_BYTES = 256 * 1024 * 1024
_PR_SET_PDEATHSIG = 1

Beat = Callable[[], Awaitable[None]]


def _prctl() -> Any:
    """Linux's prctl: a child can ask the kernel to SIGKILL it when its parent dies."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None


_PRCTL = _prctl()


class CommandError(Exception):
    """The command could not be started (not found, not executable)."""


@dataclass(frozen=True)
class CommandResult:
    """How a command ended. `stopped` is "timeout" or "cancelled" when we killed it (then
    `exit_code` is None); `output_bytes` counts all it printed, `log_bytes` what the log kept."""

    exit_code: int | None
    tail: bytes
    output_bytes: int
    log_bytes: int
    truncated: bool
    seconds: float
    log: Path
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        return self.stopped is None and self.exit_code == 0

    @property
    def timed_out(self) -> bool:
        return self.stopped == "timeout"

    def text(self, limit: int | None = None) -> str:
        """The tail (its last `limit` bytes) as text safe for jsonb and a chat: no NULs,
        whole lines where it was cut."""
        data = self.tail[-limit:] if limit else self.tail
        text = data.decode("utf-8", "replace").replace("\x00", "")
        if len(data) < len(self.tail) and "\n" in text:
            text = text.split("\n", 1)[1]
        return text


class _Sink:
    """Writes output to the log up to `max_bytes` and keeps the last `tail_bytes`."""

    def __init__(self, log: Path, max_bytes: int, tail_bytes: int) -> None:
        self.file = log.open("wb")
        self.max_bytes, self.tail_bytes = max_bytes, tail_bytes
        self.written, self.total, self.truncated = 0, 0, False
        self.tail = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.tail += chunk
        del self.tail[:-self.tail_bytes]
        room = self.max_bytes - self.written
        if room > 0:
            self.file.write(chunk[:room])
            self.written += min(room, len(chunk))
        if len(chunk) > room and not self.truncated:
            self.truncated = True
            self.file.write(f"\n[signoff: log cut at {self.max_bytes} bytes]\n".encode())

    async def pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(CHUNK):
            self.feed(chunk)

    def result(self, exit_code: int | None, started: float, log: Path,
               stopped: str | None) -> CommandResult:
        return CommandResult(exit_code, bytes(self.tail), self.total, self.written,
                             self.truncated, time.monotonic() - started, log, stopped)


async def _beat(heartbeat: Beat, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        await heartbeat()


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal (SIGKILL by default) a whole process group; gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _die_with_parent() -> None:
    # Runs in the child between fork and exec. The group is still killed by us; this only
    # covers the direct child at once when our process dies without a chance to.
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def _stop(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the group and SIGKILL it after `grace` (at once with none); always SIGKILL
    the leftovers of the group, also after the main process ended."""
    if proc.returncode is None and grace > 0:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), grace)
    kill_group(proc.pid)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_WAIT)


async def _start(argv: Sequence[str], cwd: Path, env: Mapping[str, str],
                 die_with_parent: bool) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent if die_with_parent else None)
    except OSError as exc:
        raise CommandError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None


async def run_command(argv: Sequence[str], *, cwd: Path, log: Path, env: Mapping[str, str],
                      timeout: float, cancelled: asyncio.Event | None = None,
                      max_log_bytes: int = MAX_LOG_BYTES, tail_bytes: int = TAIL_BYTES,
                      heartbeat: Beat | None = None, heartbeat_every: float = 10.0,
                      term_grace: float = TERM_GRACE, die_with_parent: bool = False,
                      on_start: Callable[[int], None] | None = None) -> CommandResult:
    """Run `argv` (no shell) with exactly `env` to its end, the timeout, or `cancelled`;
    never leave its process group running. CommandError when it cannot start.

    A heartbeat that raises (the lease is lost) kills the group and propagates, as does
    the caller's own cancellation. `die_with_parent`: the kernel kills the command when
    this process dies (a worker killed with SIGKILL)."""
    sink = _Sink(log, max_log_bytes, tail_bytes)
    started = time.monotonic()
    try:
        proc = await _start(argv, cwd, env, die_with_parent)
    except BaseException:
        sink.file.close()
        raise
    assert proc.stdout is not None
    if on_start is not None:
        on_start(proc.pid)
    pump = asyncio.create_task(sink.pump(proc.stdout))
    waiters: set[asyncio.Task[Any]] = {asyncio.create_task(proc.wait()),
                                       asyncio.create_task((cancelled or asyncio.Event()).wait())}
    if heartbeat is not None:
        waiters.add(asyncio.create_task(_beat(heartbeat, heartbeat_every)))
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            t.result()  # a heartbeat's LeaseLost surfaces here
        stopped = None if proc.returncode is not None else (
            "cancelled" if cancelled is not None and cancelled.is_set() else "timeout")
    finally:
        for t in waiters:
            t.cancel()
        await _stop(proc, term_grace)
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(pump, DRAIN_SECONDS)
        sink.file.close()
    return sink.result(None if stopped else proc.returncode, started, log, stopped)
