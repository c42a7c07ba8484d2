"""Runs the `signoff` command line as a real subprocess and reads the database behind it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from taskqueue.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

# Every key the CLI contract promises in a task's JSON, and in its latest approval.
TASK_KEYS = {
    "id", "capability", "status", "priority", "payload", "state", "result", "attempts",
    "max_attempts", "worker", "claim", "lease_expires_at", "created_at", "updated_at",
    "last_error", "approval",
}
APPROVAL_KEYS = {
    "id", "question", "request", "decision", "note", "decided_by", "decided_at", "expires_at",
}

# Exit codes of the contract.
OK, ERROR, USAGE, EMPTY, LEASE_LOST, NOT_FOUND, CONFLICT = 0, 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class Cli:
    """`signoff` against one database: `cli("ls", "--json")` returns the finished process.

    It runs `python -m taskqueue` as a real subprocess; `cli.fast` runs the same `main()`
    in this process (same parsing, output and exit codes, without the interpreter's start-up),
    for the setup steps and reads around the call a test is about.
    """

    dsn: str
    in_process: bool = False

    @property
    def fast(self) -> Cli:
        return Cli(self.dsn, in_process=True)

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        if self.in_process:
            return self._main(list(args), stdin)
        env = os.environ | {"DATABASE_URL": self.dsn}
        return subprocess.run(
            [sys.executable, "-m", "taskqueue", *args], input=stdin, capture_output=True,
            text=True, env=env, cwd=ROOT, timeout=60, check=False)

    def _main(self, args: list[str], stdin: str | None) -> subprocess.CompletedProcess[str]:
        out, err = io.StringIO(), io.StringIO()
        saved_stdin, saved_dsn = sys.stdin, os.environ.get("DATABASE_URL")
        os.environ["DATABASE_URL"] = self.dsn
        sys.stdin = io.StringIO(stdin or "")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(args)
                except SystemExit as exc:  # argparse's usage errors
                    code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.stdin = saved_stdin
            if saved_dsn is None:
                os.environ.pop("DATABASE_URL", None)
            else:
                os.environ["DATABASE_URL"] = saved_dsn
        return subprocess.CompletedProcess(["signoff", *args], code, out.getvalue(),
                                           err.getvalue())

    def ok(self, *args: str, stdin: str | None = None) -> str:
        """Run a command that must succeed silently on stderr; its stdout."""
        proc = self(*args, stdin=stdin)
        assert proc.returncode == OK, (args, proc.returncode, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc.stdout

    def json(self, *args: str, stdin: str | None = None) -> Any:
        """Run a command that must succeed and print one JSON document."""
        return json.loads(self.ok(*args, stdin=stdin))

    def fails(self, code: int, *args: str, stdin: str | None = None) -> str:
        """Run a command that must exit `code` with one clear line on stderr; that line."""
        proc = self(*args, stdin=stdin)
        return check_failed(proc, code)

    # Setup steps and reads: always in-process.

    def enqueue(self, capability: str = "demo", *args: str) -> int:
        return last_id(self.fast.ok("enqueue", capability, *args))

    def claim(self, capability: str = "demo", worker: str = "w1", *args: str) -> dict[str, Any]:
        task: dict[str, Any] = self.fast.json("claim", capability, "--worker", worker, *args)
        return task

    def show(self, task_id: int) -> dict[str, Any]:
        doc: dict[str, Any] = self.fast.json("show", str(task_id), "--json")
        return doc


def check_failed(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The process exited `code`, printed nothing, and said why in one line, no traceback."""
    assert proc.returncode == code, (proc.args, proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == "", (proc.args, proc.stdout)
    if code == USAGE:  # one line naming the problem, then where help is
        assert proc.stderr.count("\n") == 1 and proc.stderr.endswith("\n"), proc.stderr
        assert re.fullmatch(r"signoff: error: .+ \(see 'signoff( [a-z-]+)* --help'\)\n",
                            proc.stderr), proc.stderr
        return proc.stderr.rstrip("\n")
    lines = proc.stderr.strip().splitlines()
    if code == EMPTY and not lines:  # nothing to claim need not say so
        return ""
    assert len(lines) == 1, (proc.args, proc.stderr)
    return lines[0]


def last_id(stdout: str) -> int:
    """The id a command printed alone on its last line."""
    last = stdout.rstrip("\n").splitlines()[-1]
    assert last.isdigit(), stdout
    return int(last)


def count(dsn: str, sql: str, *params: Any) -> int:
    """One number read straight from the database (for "nothing was written" checks)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(sql, params).fetchone()
    assert row is not None
    return int(row[0])


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
