"""`signoff embedded status|stop` (and any command that starts the server) believe
pgdata/postmaster.pid only for this folder's own postgres: a live stranger named there is
never reported running and never signalled."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskqueue.embedded import postmaster
from taskqueue.embedded import server as embedded
from tests.taskqueue.conftest import stop_embedded
from tests.taskqueue.embedded.embedded_helpers import (
    PEER,
    PROBE,
    code_tree,
    ensure_user,
    postmaster_pid,
    signoff,
)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch users")
COMMANDS = (("embedded", "status"), ("embedded", "status", "--json"), ("embedded", "stop"),
            ("ls",))


def stranger(uid: int | None = None, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """A live process that is no postgres: `sleep`, as `uid` and in `cwd` when given."""
    if uid is None:
        return subprocess.Popen(["sleep", "600"], cwd=cwd)
    return subprocess.Popen(["sleep", "600"], user=uid, group=pwd.getpwuid(uid).pw_gid,
                            extra_groups=[], cwd=cwd)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = stranger()
    yield proc
    proc.kill()
    proc.wait()


def gone(pid: int) -> bool:
    """Whether process `pid` has exited (an unreaped one is a zombie)."""
    try:
        status = (Path(f"/proc/{pid}") / "status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def plant(data: Path, pid: int) -> None:
    """A pid file as postgres writes it, naming `pid`."""
    pgdata = data / "pgdata"
    pgdata.mkdir(parents=True, exist_ok=True)
    (pgdata / "postmaster.pid").write_text(
        f"{pid}\n{pgdata}\n1796217572\n5432\n{pgdata}\n\n  2212716        46\nready   \n")


def assert_refused(proc: subprocess.CompletedProcess[str], data: Path, pid: int,
                   why: str) -> None:
    """One line naming the pid file, the process and why, exit 1, nothing on stdout."""
    assert (proc.returncode, proc.stdout) == (1, ""), proc
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(
        f"signoff: {data / 'pgdata' / 'postmaster.pid'} names process {pid}, which is not "
        f"this folder's PostgreSQL ({why}"), proc.stderr
    assert proc.stderr.endswith("nothing was signalled. If no server runs here, remove that "
                                "file\n"), proc.stderr


def test_a_pid_file_naming_a_live_stranger_is_neither_running_nor_signalled(
        data_folder: Path, sleeper: subprocess.Popen[bytes]) -> None:
    data = data_folder / "data"
    plant(data, sleeper.pid)
    # As root the user differs first; as anyone else the data folder does.
    why = "it runs as uid 0, not as the server's user" if os.geteuid() == 0 else \
        "its data folder is "
    for command in COMMANDS:
        assert_refused(signoff(data, *command), data, sleeper.pid, why)
        assert sleeper.poll() is None  # alive: never signalled
    assert (data / "pgdata" / "postmaster.pid").exists()


@needs_root
def test_a_process_of_the_servers_own_user_that_is_not_postgres_is_not_signalled(
        data_folder: Path) -> None:
    data = data_folder / "data"
    plant(data, 0)
    # Right user, right folder (as postgres, it runs in pgdata): only the program differs.
    proc = stranger(embedded.server_owner().uid, cwd=data / "pgdata")
    try:
        plant(data, proc.pid)
        for command in COMMANDS:
            done = signoff(data, *command)
            assert_refused(done, data, proc.pid, "its program is /")
            assert "sleep, not a postgres this Signoff runs)" in done.stderr
            assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


@needs_root
def test_a_folder_of_another_user_is_refused_and_its_stranger_not_signalled(
        data_folder: Path, sleeper: subprocess.Popen[bytes]) -> None:
    ensure_user(PEER)
    data = data_folder / "data"
    plant(data, sleeper.pid)
    for folder in (data, data / "pgdata", data / "pgdata" / "postmaster.pid"):
        shutil.chown(folder, PEER, PEER)
    uid = pwd.getpwnam(PEER).pw_uid
    for command in COMMANDS:
        done = signoff(data, *command)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (f"signoff: the data folder {data} belongs to uid {uid}, not "
                               "to this user (uid 0)\n")
        assert sleeper.poll() is None


@needs_root
@pytest.mark.slow
def test_an_unprivileged_user_does_not_signal_roots_process_named_in_its_folder(
        sleeper: subprocess.Popen[bytes]) -> None:
    ensure_user(PROBE)
    base = Path(tempfile.mkdtemp(prefix="signoff-emb-user-", dir="/tmp"))
    code = Path(tempfile.mkdtemp(prefix="signoff-emb-code-", dir="/tmp"))
    code.chmod(0o755)
    try:
        shutil.chown(base, PROBE, PROBE)
        path = str(code_tree(code / "site"))
        data = base / "data"
        for command in (["embedded", "status"], ["embedded", "stop"]):
            # PROBE's own folder and pid file, naming root's sleep.
            subprocess.run(["runuser", "-u", PROBE, "--", "mkdir", "-p", str(data / "pgdata")],
                           check=True)
            plant(data, sleeper.pid)
            shutil.chown(data / "pgdata" / "postmaster.pid", PROBE, PROBE)
            done = signoff(data, *command, user=PROBE, pythonpath=path)
            assert_refused(done, data, sleeper.pid, "it runs as uid 0, not as the server's user")
            assert sleeper.poll() is None
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(code, ignore_errors=True)


def test_a_stale_pid_file_of_a_process_that_is_gone_says_stopped(data_folder: Path) -> None:
    gone = stranger()
    gone.kill()
    gone.wait()
    data = data_folder / "data"
    plant(data, gone.pid)
    status = signoff(data, "embedded", "status")
    assert (status.returncode, status.stderr) == (0, "")
    assert status.stdout == f"embedded PostgreSQL in {data}: stopped\n"
    stop = signoff(data, "embedded", "stop")
    assert (stop.returncode, stop.stderr) == (0, "")
    assert stop.stdout == f"embedded PostgreSQL in {data}: was not running\n"


@pytest.mark.slow
def test_another_folders_postmaster_is_not_this_folders_and_each_stops_its_own(
        data_folder: Path) -> None:
    ours, other = data_folder / "ours", data_folder / "other"
    try:
        assert signoff(other, "ls").stdout == "no tasks\n"
        pid = postmaster_pid(other)
        plant(ours, pid)  # a copied data folder, say: its pid file names the other server
        for command in COMMANDS:
            assert_refused(signoff(ours, *command), ours, pid,
                           f"its data folder is {other / 'pgdata'}")
        # The other server still runs, and is still reported and stopped as its own.
        assert signoff(other, "embedded", "status").stdout.endswith(": running\n")
        stop = signoff(other, "embedded", "stop")
        assert (stop.returncode, stop.stdout) == (0, f"embedded PostgreSQL in {other}: stopped\n")
        assert gone(pid)  # stop returns once the postmaster exited
        assert signoff(other, "embedded", "status").stdout.endswith(": stopped\n")
        assert not (other / "pgdata" / "postmaster.pid").exists()
    finally:
        stop_embedded(other)


@pytest.mark.parametrize("text", ["", "abc\n", "\u00b2\n", "0\n", "-5\n", "4194305\n",
                                  f"{2**40}\n", "9" * 10_000])
def test_a_pid_file_without_a_live_pid_reads_as_no_server(tmp_path: Path, text: str) -> None:
    (tmp_path / "postmaster.pid").write_text(text)
    assert postmaster.running(tmp_path, [], os.geteuid()) is None
