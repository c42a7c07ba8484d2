"""`make test`'s lint covers the project's own packages, not a user's files beside them: with
the README's example saved where it says (mywork/greetings.py in the repository's root) and
another file of the user's with unsorted imports, the Makefile's lint passes and the suite
collects none of them, while the same file inside a package of the project still fails it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_readme import _block

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
pytestmark = pytest.mark.slow

UNSORTED = "import sys\nimport os\n\nprint(os.sep, sys.argv)\n"


def _checkout(tmp_path: Path) -> Path:
    """A copy of the repository with the README's example and a user's own file in it."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".ruff_cache",
        ".pytest_cache", "node_modules"))
    (copy / "mywork").mkdir(exist_ok=True)  # the user may have saved it in the checkout
    (copy / "mywork" / "greetings.py").write_text(_block("python", "# mywork/greetings.py"))
    (copy / "mywork" / "unsorted.py").write_text(UNSORTED)
    (copy / "notes.py").write_text(UNSORTED)
    # A user's own test file: the suite's collection (testpaths) must not pick it up.
    (copy / "mywork" / "test_mine.py").write_text('raise SystemExit("collected")\n')
    return copy


def _make_lint(copy: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The Makefile's `lint` target in `copy`, with this checkout's tools: its venv markers
    stand in a folder of their own, newer than the copy's pyproject.toml, so nothing is
    installed and this checkout's venv is left alone."""
    venv = tmp_path / "venv-markers"
    venv.mkdir(exist_ok=True)
    for marker in (".installed", ".installed-dev"):
        (venv / marker).touch()
    env = {**os.environ, "MYPY_CACHE_DIR": str(tmp_path / "mypy-cache")}
    return subprocess.run(["make", "-s", "lint", f"VENV={venv}", f"BIN={BIN}"], cwd=copy,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def test_the_lint_passes_with_a_users_files_beside_the_packages(tmp_path: Path) -> None:
    copy = _checkout(tmp_path)
    # The README's example is what a newcomer saves there, and it is not isort-clean: the
    # lint it used to fail (I001) is a real one, outside the project's code.
    done = subprocess.run([BIN / "ruff", "check", "--isolated", "--select", "I",
                           "mywork/greetings.py"], cwd=copy, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1 and "I001" in done.stdout, done.stdout
    done = _make_lint(copy, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # ruff with no paths, as a user may run it, reads the same scope from pyproject.toml.
    done = subprocess.run([BIN / "ruff", "check"], cwd=copy, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    # Nor does the suite collect the user's test file.
    done = subprocess.run([BIN / "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=copy, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tests/test_lint_scope.py::" in done.stdout and "mywork" not in done.stdout


def test_the_lint_still_fails_on_the_projects_own_code(tmp_path: Path) -> None:
    copy = _checkout(tmp_path)
    (copy / "taskqueue" / "unsorted_here.py").write_text('"""Unsorted."""\n\n' + UNSORTED)
    done = _make_lint(copy, tmp_path)
    assert done.returncode != 0
    assert "I001" in done.stdout and "taskqueue/unsorted_here.py" in done.stdout, done.stdout
