"""Run one external command (a build or an upload): its own process group, output streamed
to a bounded log file with a tail kept in memory, heartbeats while it runs, and the whole
group killed on timeout, cancellation (lease loss, shutdown) or any error of ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SECRET_ENV", "CommandError", "CommandResult", "clean_env", "run_command", "tail_text"]

CHUNK = 64 * 1024
# After SIGTERM to the group, how long before SIGKILL (seconds).
TERM_GRACE = 3.0
# How long the output may keep flowing after the main process ended (a child holding it).
DRAIN_SECONDS = 2.0
# Never handed to a build: the build runs the repository's code.
SECRET_ENV = ("SIGNOFF_ASC_KEY_ID", "SIGNOFF_ASC_ISSUER_ID", "SIGNOFF_ASC_KEY_PATH",
              "SIGNOFF_ROBLOX_API_KEY", "DATABASE_URL", "TELEGRAM_BOT_TOKEN",
              "TELEGRAM_WEBHOOK_SECRET", "SIGNOFF_MODEL_API_KEY")

Beat = Callable[[], Awaitable[None]]


class CommandError(Exception):
    """The command could not be started (not found, not executable)."""


@dataclass(frozen=True)
class CommandResult:
    """How a command ended. `stopped` is "timeout" or "cancelled" when we killed it."""

    exit_code: int | None
    duration: float
    tail: bytes
    log_bytes: int
    truncated: bool
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        return self.stopped is None and self.exit_code == 0


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without secrets, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return {**env, **(extra or {})}


def tail_text(tail: bytes, limit: int | None = None) -> str:
    """A log tail as text safe for jsonb and a chat: no NULs, whole lines where possible."""
    data = tail[-limit:] if limit else tail
    text = data.decode("utf-8", "replace").replace("\x00", "")
    if len(data) < len(tail) and "\n" in text:
        text = text.split("\n", 1)[1]
    return text


class _Sink:
    """Writes output to the log up to `max_bytes` and keeps the last `tail_bytes`."""

    def __init__(self, log: Path, max_bytes: int, tail_bytes: int) -> None:
        self.file = log.open("wb")
        self.max_bytes, self.tail_bytes = max_bytes, tail_bytes
        self.written, self.truncated = 0, False
        self.tail = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.tail += chunk
        del self.tail[:-self.tail_bytes]
        room = self.max_bytes - self.written
        if room > 0:
            self.file.write(chunk[:room])
            self.written += min(room, len(chunk))
        if len(chunk) > room and not self.truncated:
            self.truncated = True
            self.file.write(f"\n[log truncated at {self.max_bytes} bytes]\n".encode())

    def close(self) -> None:
        self.file.close()


async def _pump(stream: asyncio.StreamReader, sink: _Sink) -> None:
    while chunk := await stream.read(CHUNK):
        sink.feed(chunk)


async def _beat(heartbeat: Beat, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        await heartbeat()


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, SIGKILL it after TERM_GRACE; always SIGKILL leftovers."""
    if proc.returncode is None:
        _killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), TERM_GRACE)
    _killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), TERM_GRACE)


async def _start(argv: Sequence[str], cwd: Path, env: Mapping[str, str]
                 ) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True)
    except OSError as exc:
        raise CommandError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None


async def run_command(argv: Sequence[str], *, cwd: Path, log: Path, env: Mapping[str, str],
                      timeout: float, cancelled: asyncio.Event, max_log_bytes: int,
                      tail_bytes: int, heartbeat: Beat | None = None,
                      beat_every: float = 10.0,
                      on_start: Callable[[int], None] | None = None) -> CommandResult:
    """Run `argv` (no shell) to its end, the timeout, or `cancelled`; never leave it running.

    A heartbeat that raises (the lease is lost) kills the group and propagates."""
    sink = _Sink(log, max_log_bytes, tail_bytes)
    started = time.monotonic()
    try:
        proc = await _start(argv, cwd, env)
    except BaseException:
        sink.close()
        raise
    assert proc.stdout is not None
    if on_start is not None:
        on_start(proc.pid)
    pump = asyncio.create_task(_pump(proc.stdout, sink))
    waiters: set[asyncio.Task[Any]] = {asyncio.create_task(proc.wait()),
                                       asyncio.create_task(cancelled.wait())}
    if heartbeat is not None:
        waiters.add(asyncio.create_task(_beat(heartbeat, beat_every)))
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            t.result()  # a heartbeat's LeaseLost surfaces here
        stopped = None if proc.returncode is not None else (
            "cancelled" if cancelled.is_set() else "timeout")
    finally:
        for t in waiters:
            t.cancel()
        await _stop(proc)
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(pump, DRAIN_SECONDS)
        sink.close()
    return CommandResult(None if stopped else proc.returncode, time.monotonic() - started,
                         bytes(sink.tail), sink.written, sink.truncated, stopped)
