"""`signoff web user add NAME` at a terminal (a real pty): a too-short password is refused
right after the first prompt, before "Again:" is asked; a good one is asked twice."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time

from bot.web.store import AccountStore
from taskqueue import TaskQueue

# Each prompt is waited for this long (seconds): a cold `signoff` start on a busy machine.
PROMPT_WAIT = 60.0


class Terminal:
    """`python -m taskqueue ARGS` with a pty as its controlling terminal (getpass reads it)."""

    def __init__(self, dsn: str, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
        env["DATABASE_URL"] = dsn
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: its stdin, stdout and /dev/tty are the pty
            os.execve(sys.executable, [sys.executable, "-m", "taskqueue", *args], env)
        self.seen = b""

    def read_until(self, text: bytes, wait: float = PROMPT_WAIT) -> bytes:
        """What it wrote up to `text` (or up to its exit, when `text` never comes)."""
        deadline = time.monotonic() + wait
        while text not in self.seen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child exited and closed the pty
                    break
                if not chunk:
                    break
                self.seen += chunk
        return self.seen

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def exit_code(self) -> int:
        """Its exit code once it ends; a child still waiting for input is killed and fails."""
        self.read_until(b"\0never\0", wait=PROMPT_WAIT)  # drain to EOF
        # The pty closes a moment before the child can be reaped: give it a few seconds.
        deadline = time.monotonic() + 10
        while (found := os.waitpid(self.pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        pid, status = found
        if pid == 0:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            os.close(self.fd)
            raise AssertionError(f"still running (waiting for input?): {self.seen!r}")
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


async def _names(dsn: str) -> list[str]:
    async with TaskQueue.connect(dsn, max_size=1) as queue:
        return [a.name for a in await AccountStore(queue.pool).account_list()]


async def test_a_short_password_is_refused_before_the_second_prompt(dsn: str) -> None:
    term = Terminal(dsn, "web", "user", "add", "ada")
    assert b"Password: " in term.read_until(b"Password: ")
    term.type("short")
    assert term.exit_code() == 1
    said = term.seen.decode(errors="replace")
    assert "a password is 8 to 1024 characters" in said
    assert "Again" not in said
    assert await _names(dsn) == []


async def test_a_good_password_is_asked_twice_and_the_account_added(dsn: str) -> None:
    term = Terminal(dsn, "web", "user", "add", "ada")
    term.read_until(b"Password: ")
    term.type("long enough password")
    assert b"Again: " in term.read_until(b"Again: ")
    term.type("long enough password")
    assert term.exit_code() == 0
    assert "account ada added" in term.seen.decode(errors="replace")
    assert await _names(dsn) == ["ada"]


async def test_two_different_passwords_add_nothing(dsn: str) -> None:
    term = Terminal(dsn, "web", "user", "add", "ada")
    term.read_until(b"Password: ")
    term.type("long enough password")
    term.read_until(b"Again: ")
    term.type("another long password")
    assert term.exit_code() == 1
    assert "the two passwords differ" in term.seen.decode(errors="replace")
    assert await _names(dsn) == []
