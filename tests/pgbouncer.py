"""A real PgBouncer (Debian's `pgbouncer`) in front of the tests' PostgreSQL, on a free port, in
transaction mode: what a managed deployment puts between Signoff and its server."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

from tests.timing import limit

BINARY = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Bouncer:
    """A running PgBouncer: `dsn_for(direct_dsn)` is the same database through it."""

    port: int
    folder: Path

    def dsn_for(self, direct: str) -> str:
        info = psycopg.conninfo.conninfo_to_dict(direct)
        info.update(host="127.0.0.1", port=str(self.port))
        return psycopg.conninfo.make_conninfo(**info)

    @property
    def log(self) -> str:
        path = self.folder / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def pgbouncer(server_dsn: str, *, users: tuple[str, ...] = ("postgres",),
              pool_size: int = 10) -> Iterator[Bouncer]:
    """PgBouncer in `pool_mode = transaction` for every database of `server_dsn`'s server
    (trust auth, as the test server), stopped afterwards."""
    info = psycopg.conninfo.conninfo_to_dict(server_dsn)
    folder = Path(tempfile.mkdtemp(prefix="signoff-pgb-", dir="/tmp"))
    port = free_port()
    (folder / "users.txt").write_text("".join(f'"{u}" ""\n' for u in users))
    (folder / "pgbouncer.ini").write_text(f"""\
[databases]
* = host={info.get("host", "127.0.0.1")} port={info.get("port", "5432")}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/users.txt
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 500
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
admin_users = postgres
""")
    command = [BINARY, str(folder / "pgbouncer.ini")]
    if os.geteuid() == 0:  # PgBouncer refuses to run as root
        shutil.chown(folder, "postgres")
        for f in folder.iterdir():
            shutil.chown(f, "postgres")
        command = ["runuser", "-u", "postgres", "--", *command]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_listening(port, proc)
        yield Bouncer(port, folder)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + limit(15)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"pgbouncer exited: {said}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError("pgbouncer did not listen within 15 s")
