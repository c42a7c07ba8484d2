"""The core's claim, park, decide and resume tests on the highest supported PostgreSQL (the
embedded server's, 18), beside the whole suite on the lowest (the system's 15): the same
test files, pointed at a private embedded server through SIGNOFF_TEST_ADMIN_DSN."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[1]
# The core's claim, park, decide and resume paths (their fast tests).
CORE_TESTS = ["tests/taskqueue/test_claim.py", "tests/taskqueue/test_approvals.py",
              "tests/taskqueue/test_four_eyes.py", "tests/taskqueue/test_schema_guard.py",
              "tests/taskqueue/test_worker_runtime.py", "tests/taskqueue/test_migrate.py"]


@pytest.fixture
def embedded_server() -> Iterator[str]:
    """A private embedded server (its own data folder, outside /root), stopped after."""
    from taskqueue.store import embedded

    folder = Path(tempfile.mkdtemp(prefix="signoff-pg18-", dir="/tmp"))
    folder.chmod(0o711)
    try:
        yield embedded.start(folder / "data")
    finally:
        embedded.stop(folder / "data")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_core_tests_pass_on_the_highest_supported_postgresql(embedded_server: str) -> None:
    with psycopg.connect(embedded_server) as conn:
        version = conn.info.server_version
    assert version >= 180000, version
    env = os.environ | {"SIGNOFF_TEST_ADMIN_DSN": embedded_server}
    env.pop("DATABASE_URL", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *CORE_TESTS, "-q", "-m", "not slow",
         "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=1400, check=False)
    tail = "\n".join(run.stdout.splitlines()[-15:])
    assert run.returncode == 0, tail
    assert " passed" in tail and "failed" not in tail
    print(f"on PostgreSQL {version // 10000}.{version % 10000}: {tail.splitlines()[-1]}")
