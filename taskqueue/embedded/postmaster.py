"""Which process runs a data folder's PostgreSQL: `pgdata/postmaster.pid` is believed only
when /proc shows that process is the embedded `postgres` of that folder, run by the server's
user; and the signals that stop it, sent through a pidfd so they reach that process only."""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from taskqueue.errors import DatabaseUnavailable

PID_FILE = "postmaster.pid"
# The pid file's lines, as postgres writes them (the later ones once it listens).
_LINES = ("pid", "pgdata", "start_time", "port", "socket_dir", "listen", "shmem", "status")
_MAX_BYTES = 4096  # postgres writes a few hundred


@dataclass(frozen=True)
class Postmaster:
    """A running server, proven to be this folder's: what its pid file says."""

    pid: int
    socket_dir: Path | None
    status: str

    def uri(self) -> str:
        """The libpq URI of its Unix socket (the embedded server listens on nothing else)."""
        return f"postgresql://postgres:@/postgres?host={self.socket_dir}"


class NotOurs(DatabaseUnavailable):
    """The pid file names a live process that is not this folder's PostgreSQL."""


def running(pgdata: Path, programs: Iterable[Path], uid: int | None) -> Postmaster | None:
    """The postmaster of `pgdata`; None when none runs (no pid file, or its process is
    gone). NotOurs when the pid file names a live process that is not provably it (another
    program, data folder or user)."""
    with _opened(pgdata, programs, uid) as found:
        return found[0] if found else None


def stop(pgdata: Path, programs: Iterable[Path], uid: int | None,
         timeout: float) -> Postmaster | None:
    """Stop the postmaster of `pgdata` as `pg_ctl stop -m fast` does (SIGINT), and at once
    (SIGQUIT, `-m immediate`) if it has not exited after `timeout` seconds; None when none
    ran. NotOurs, with nothing signalled, as `running` says."""
    with _opened(pgdata, programs, uid) as found:
        if found is None:
            return None
        server, fd = found
        for signum, wait in ((signal.SIGINT, timeout), (signal.SIGQUIT, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(fd, signum)
            if _exited(fd, wait):
                return server
        raise DatabaseUnavailable(f"the embedded PostgreSQL (process {server.pid}) did not stop")


@contextlib.contextmanager
def _opened(pgdata: Path, programs: Iterable[Path],
            uid: int | None) -> Iterator[tuple[Postmaster, int] | None]:
    """The proven postmaster and a pidfd on it while the block runs, or None."""
    fields = _read(pgdata / PID_FILE)
    if fields is None:
        yield None
        return
    pid = int(fields["pid"])
    if not hasattr(os, "pidfd_open"):
        raise DatabaseUnavailable("telling the embedded server's process from a stranger "
                                  "needs Linux (/proc and pidfds)")
    try:
        fd = os.pidfd_open(pid)
    except (ProcessLookupError, OverflowError):  # a stale file: no such process
        yield None
        return
    try:
        # Read /proc after the pidfd is open: if the pid is reused meanwhile, the pidfd
        # (still on the old process) reports its exit below.
        problem = _stranger(pid, pgdata, programs, uid)
        if _exited(fd, 0):
            yield None
        elif problem is not None:
            raise NotOurs(f"{pgdata / PID_FILE} names process {pid}, which is not this "
                          f"folder's PostgreSQL ({problem}); nothing was signalled. If no "
                          "server runs here, remove that file")
        else:
            socket_dir = fields.get("socket_dir")
            yield Postmaster(pid, Path(socket_dir) if socket_dir else None,
                             fields.get("status", "starting")), fd
    finally:
        os.close(fd)


def _read(path: Path) -> dict[str, str] | None:
    """The pid file's fields, or None without one (or with one postgres is still writing)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as pid_file:
            lines = pid_file.read(_MAX_BYTES).splitlines()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatabaseUnavailable(f"cannot read {path}: {exc.strerror}") from None
    fields = dict(zip(_LINES, (line.strip() for line in lines), strict=False))
    pid = fields.get("pid", "")
    if not (pid.isascii() and pid.isdigit()) or int(pid) == 0:
        return None
    return fields


def _stranger(pid: int, pgdata: Path, programs: Iterable[Path], uid: int | None) -> str | None:
    """Why process `pid` is not the postmaster of `pgdata`, or None when it is."""
    proc = Path(f"/proc/{pid}")
    try:
        uids = _uids(proc)
        if uid is None or any(u != uid for u in uids[:2]):
            return f"it runs as uid {uids[0]}, not as the server's user"
        # postgres runs in its data folder (it chdirs there before writing the pid file).
        if not os.path.samestat(os.stat(proc / "cwd"), os.stat(pgdata)):
            return f"its data folder is {_link(proc / 'cwd')}"
        exe = os.stat(proc / "exe")
        if not any(os.path.samestat(exe, p) for p in _stats(programs)):
            return f"its program is {_link(proc / 'exe')}, not a postgres this Signoff runs"
    except FileNotFoundError:
        return "it is gone"
    except OSError as exc:
        return f"it cannot be inspected: {exc.strerror}"
    return None


def _uids(proc: Path) -> list[int]:
    """The real, effective, saved and file-system uids from /proc/PID/status."""
    for line in (proc / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return [int(u) for u in line.split()[1:]]
    raise FileNotFoundError(proc / "status")


def _stats(paths: Iterable[Path]) -> Iterator[os.stat_result]:
    for path in paths:
        with contextlib.suppress(OSError):
            yield os.stat(path)


def _link(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError as exc:
        return f"? ({exc.strerror})"


def _exited(fd: int, timeout: float) -> bool:
    """Whether the pidfd's process has exited, waiting up to `timeout` seconds."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(int(timeout * 1000)))
