"""PostgreSQL servers of a test's own, on free ports: a primary and a synchronous standby
for the failover tests (initdb, pg_basebackup -R, `promote` when the test says), or one
server with settings the shared one must not change (a small max_connections), which a test
may crash and start again."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.pgbouncer import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
SETTINGS = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{folder}'
wal_level = replica
max_wal_senders = 5
hot_standby = on
fsync = off
max_connections = 60
"""


def _as_postgres(*command: str) -> subprocess.CompletedProcess[str]:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120,
                          check=True)


@dataclass(frozen=True)
class Pair:
    folder: Path
    primary_port: int
    standby_port: int

    @property
    def dsn(self) -> str:
        """Both hosts, the writable one wanted: what a new user writes for a failover pair."""
        return (f"postgresql://postgres@127.0.0.1:{self.primary_port},127.0.0.1:"
                f"{self.standby_port}/postgres?target_session_attrs=read-write&connect_timeout=2")

    def direct(self, port: int) -> str:
        return f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def stop_primary(self) -> None:
        """The primary dies (an immediate stop: no shutdown checkpoint, connections cut)."""
        _as_postgres(str(BIN / "pg_ctl"), "-D", str(self.folder / "primary"), "-m",
                     "immediate", "stop")

    def promote(self) -> None:
        _as_postgres(str(BIN / "pg_ctl"), "-D", str(self.folder / "standby"), "-w", "promote")


def _start(data: Path) -> None:
    _as_postgres(str(BIN / "pg_ctl"), "-D", str(data), "-l", str(data.parent / f"{data.name}.log"),
                 "-w", "start")


@contextlib.contextmanager
def primary_and_standby(*, synchronous: bool = True) -> Iterator[Pair]:
    folder = Path(tempfile.mkdtemp(prefix="signoff-repl-", dir="/tmp"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    pair = Pair(folder, free_port(), free_port())
    primary, standby = folder / "primary", folder / "standby"
    try:
        _as_postgres(str(BIN / "initdb"), "-D", str(primary), "-A", "trust", "-U", "postgres",
                     "--no-sync")
        conf = SETTINGS.format(port=pair.primary_port, folder=folder)
        if synchronous:
            conf += "synchronous_standby_names = '*'\n"
        with (primary / "postgresql.conf").open("a") as f:
            f.write(conf)
        _start(primary)
        _as_postgres(str(BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p",
                     str(pair.primary_port), "-U", "postgres", "-D", str(standby), "-R",
                     "-X", "stream", "--no-sync")
        with (standby / "postgresql.conf").open("a") as f:
            f.write(f"port = {pair.standby_port}\nsynchronous_standby_names = ''\n")
        _start(standby)
        yield pair
    finally:
        for data in (primary, standby):
            if (data / "postmaster.pid").exists():
                with contextlib.suppress(subprocess.SubprocessError):
                    _as_postgres(str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                 "stop")
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Server:
    """A server of the test's own that the test can crash and start again."""

    data: Path
    port: int
    bin_dir: Path

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def crash(self) -> None:
        """An immediate stop: connections cut, WAL not yet written is lost, as in a crash."""
        _as_postgres(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                     "stop")

    def start(self) -> None:
        _as_postgres(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l",
                     str(self.data.parent / "data.log"), "-w", "start")


@contextlib.contextmanager
def own_server(extra: str = "", *, bin_dir: Path = BIN) -> Iterator[Server]:
    """One PostgreSQL server of the test's own (the system's 15, or the programs in
    `bin_dir`; settings `extra` added to its config), stopped and removed after."""
    folder = Path(tempfile.mkdtemp(prefix="signoff-pg-", dir="/tmp"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    server = Server(folder / "data", free_port(), bin_dir)
    try:
        _as_postgres(str(bin_dir / "initdb"), "-D", str(server.data), "-A", "trust", "-U",
                     "postgres", "--no-sync")
        with (server.data / "postgresql.conf").open("a") as f:
            f.write(SETTINGS.format(port=server.port, folder=folder) + extra)
        server.start()
        yield server
    finally:
        if (server.data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.SubprocessError):
                server.crash()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def private_server(extra: str = "", *, bin_dir: Path = BIN) -> Iterator[str]:
    """One PostgreSQL server of the test's own (see own_server); its admin URL."""
    with own_server(extra, bin_dir=bin_dir) as server:
        yield server.dsn
