"""The embedded default: a private PostgreSQL under a data folder when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from taskqueue import TaskQueue
from taskqueue.embedded import server as embedded
from taskqueue.store.db import resolve_dsn
from taskqueue.store.migrate import discover, migrate
from tests.taskqueue.conftest import stop_embedded
from tests.taskqueue.embedded.embedded_helpers import (
    PEER,
    PROBE,
    SITE,
    code_tree,
    ensure_user,
    long_folder,
    modes,
    psql,
    signoff,
    socket_dir_of,
)


@pytest.mark.slow
async def test_embedded_server_starts_connects_and_migrates(
        data_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = await asyncio.to_thread(embedded.start, data_folder)
    assert await migrate(uri) == [m.version for m in discover()]
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        cur = await conn.execute("SELECT count(*) FROM schema_migrations")
        assert await cur.fetchone() == (len(discover()),)
    # Without DATABASE_URL the queue uses the same server, found through the data folder.
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("SIGNOFF_DATA_DIR", str(data_folder))
    assert await asyncio.to_thread(resolve_dsn) == uri
    async with TaskQueue.connect() as queue:
        enq = await queue.task_enqueue("demo")
        task = await queue.task_claim("demo", "w1")
        assert task is not None and task.id == enq.id


def test_data_dir_comes_from_signoff_data_dir(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("SIGNOFF_DATA_DIR", str(tmp_path))
    assert embedded.data_dir() == tmp_path.resolve()
    monkeypatch.delenv("SIGNOFF_DATA_DIR")
    assert not str(embedded.data_dir()).startswith("/root")


# -- privacy: only the server's owner may reach its socket -------------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch users")


@needs_root
@pytest.mark.slow
async def test_a_long_data_path_keeps_the_socket_private_and_the_cli_and_queue_share_it(
        data_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ensure_user(PEER)
    data = long_folder(data_folder)
    before = modes([data_folder])
    proc = signoff(data, "enqueue", "demo", "--payload", '{"n": 1}')
    assert (proc.returncode, proc.stdout, unwarned(proc.stderr)) == (0, "1\n", "")
    assert signoff(data, "ls").stderr == ""
    sock = socket_dir_of(data)
    owner = pwd.getpwnam("pgserver")
    assert not sock.is_relative_to(data) and len(str(sock)) < 40
    for folder, mode, uid in ((sock, 0o700, owner.pw_uid), (data / "pgdata", 0o700, owner.pw_uid),
                              (data, 0o710, 0)):
        info = folder.lstat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid) == (mode, uid), folder
    assert data.stat().st_gid == owner.pw_gid
    assert modes([data_folder]) == before  # nothing above the data folder was opened
    stranger = psql(sock, PEER)
    assert stranger.returncode != 0 and "Permission denied" in stranger.stderr
    assert psql(sock).stdout == "postgres\n"
    # The queue in this process (as the service opens it) finds the same server.
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("SIGNOFF_DATA_DIR", str(data))
    async with TaskQueue.connect() as queue:
        task = await queue.task_claim("demo", "w1")
        assert task is not None and task.payload == {"n": 1}
    assert embedded.stop(data) and not sock.exists()


@needs_root
@pytest.mark.slow
def test_a_short_data_path_keeps_the_socket_in_the_private_data_folder(
        data_folder: Path) -> None:
    ensure_user(PEER)
    proc = signoff(data_folder, "ls")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "no tasks\n", "")
    assert socket_dir_of(data_folder) == data_folder / "pgdata"
    stranger = psql(data_folder / "pgdata", PEER)
    assert stranger.returncode != 0 and "Permission denied" in stranger.stderr
    assert psql(data_folder / "pgdata").returncode == 0


@needs_root
@pytest.mark.slow
def test_a_server_whose_socket_folder_others_can_enter_is_refused_in_one_line(
        data_folder: Path) -> None:
    data = long_folder(data_folder)
    assert signoff(data, "ls").returncode == 0
    sock = socket_dir_of(data)
    sock.chmod(0o777)  # what pgserver itself does as root
    proc = signoff(data, "ls")
    assert proc.returncode == 1 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert proc.stderr == (f"signoff: the embedded server's socket folder {sock} is open to "
                           "other users (mode 0777, uid 1001); stop the server (`signoff "
                           "embedded stop`) and start it again\n").replace(
        "uid 1001", f"uid {sock.stat().st_uid}")
    assert signoff(data, "embedded", "stop").returncode == 0
    assert signoff(data, "ls").stdout == "no tasks\n"
    assert stat.S_IMODE(socket_dir_of(data).stat().st_mode) == 0o700


@needs_root
@pytest.mark.slow
def test_an_unprivileged_owner_reaches_its_server_and_another_user_does_not() -> None:
    if SITE is None or not Path("/usr/bin/python3").exists() or \
            f"python{sys.version_info.major}.{sys.version_info.minor}" != SITE.parent.name:
        pytest.skip("needs a system Python of the venv's version")
    ensure_user(PROBE)
    ensure_user(PEER)
    base = Path(tempfile.mkdtemp(prefix="signoff-emb-user-", dir="/tmp"))
    shutil.chown(base, PROBE, PROBE)
    data = long_folder(base)
    # The code as the user sees it: this checkout may sit in a folder only root enters.
    code = Path(tempfile.mkdtemp(prefix="signoff-emb-code-", dir="/tmp"))
    code.chmod(0o755)
    path = str(code_tree(code / "site"))
    try:
        proc = signoff(data, "enqueue", "demo", user=PROBE, pythonpath=path)
        assert (proc.returncode, unwarned(proc.stderr)) == (0, ""), proc.stderr
        sock = socket_dir_of(data)
        info = sock.lstat()
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == pwd.getpwnam(PROBE).pw_uid
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        stranger = psql(sock, PEER)
        assert stranger.returncode != 0 and "Permission denied" in stranger.stderr
        assert psql(sock, PROBE).stdout == "postgres\n"
        assert signoff(data, "ls", user=PROBE, pythonpath=path).stdout.count("\n") == 2
    finally:
        signoff(data, "embedded", "stop", user=PROBE, pythonpath=path)
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(code, ignore_errors=True)


@needs_root
def test_a_data_folder_below_one_the_servers_user_cannot_pass_is_refused_and_nothing_opened(
        ) -> None:
    closed = Path(tempfile.mkdtemp(prefix="signoff-emb-closed-", dir="/tmp"))  # root's, 0700
    data = closed / "signoff"
    try:
        before = modes([closed])
        for command in (["ls"], ["migrate"]):
            proc = signoff(data, *command)
            assert (proc.returncode, proc.stdout) == (1, "")
            assert proc.stderr == (
                f"signoff: the embedded server's user pgserver cannot pass through {closed} "
                "(mode 0700, uid 0): choose a SIGNOFF_DATA_DIR outside it (the default is "
                f"/var/lib/signoff), or let others pass with `chmod o+x {closed}`\n")
        assert modes([closed]) == before and not data.exists()
        # Doing what the line says is enough.
        closed.chmod(0o701)
        assert signoff(data, "ls").stdout == "no tasks\n"
    finally:
        stop_embedded(data)
        shutil.rmtree(closed, ignore_errors=True)


def unwarned(stderr: str) -> str:
    """What a command printed besides enqueue's expected "no settings yet" warning and the
    first start's line saying what it set up (tests/taskqueue/embedded/test_sysuser.py): the
    embedded server itself must print nothing else (no warning about folders or modes)."""
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if "has no settings in the database yet" not in line
                   and "INFO signoff.embedded.setup embedded postgres: " not in line)
