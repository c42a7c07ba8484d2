"""Fixtures of the queue core's tests that need more than a database of their own."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def data_folder() -> Iterator[Path]:
    """A data folder for a private embedded server, outside /root: as root, the server's
    own user must pass through every folder above its data (Signoff refuses a data folder
    below one it cannot pass, and never opens one), so this one lets others pass (0711, no
    listing) for tests that nest their data folder in it. The server is stopped and the
    folder removed after."""
    folder = Path(tempfile.mkdtemp(prefix="signoff-emb-", dir="/tmp"))
    folder.chmod(0o711)
    yield folder
    for pgdata in folder.rglob("pgdata"):  # a test may nest its data folder deeper
        stop_embedded(pgdata.parent)
    shutil.rmtree(folder, ignore_errors=True)


def stop_embedded(folder: Path) -> None:
    """Stop the embedded server of `folder` (its stop escalates to an immediate shutdown)."""
    from taskqueue.embedded import server as embedded

    with contextlib.suppress(Exception):
        embedded.stop(folder)
