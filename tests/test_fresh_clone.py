"""A newcomer's first five minutes: the repository in a 0700 folder under a home folder, the
README's first example saved where the README says, then the set-up steps of the README's two
commands (the virtualenv and the lint that `make test` runs first), and the test that once
failed only there (the sandbox hides home folders, the checkout with them)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme import _block

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _copy_checkout(dest: Path) -> None:
    """What a clone of this tree holds: the files git tracks (as they are now, so a change
    not yet committed is tested too) and the new ones it does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted and not yet committed is listed, and gone
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def _pip_cache() -> str:
    """The machine's pip cache, so the clone's venv installs from it, as a second clone
    would."""
    done = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() or str(Path.home() / ".cache" / "pip")


def _make(checkout: Path, env: dict[str, str], *targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-C", str(checkout), *targets], env=env, capture_output=True,
                          text=True, timeout=840, check=False)


def test_a_clone_in_a_private_home_folder_sets_up_lints_and_passes_the_sandbox_test(
        tmp_path: Path) -> None:
    home = tmp_path / "home" / "newcomer"
    checkout = home / "signoff"
    checkout.mkdir(parents=True)
    _copy_checkout(checkout)
    for folder in (home, checkout):
        folder.chmod(0o700)
    # The README: "Save it as mywork/greetings.py in the current directory (here, the
    # repository's root)", and the config beside it.
    (checkout / "mywork").mkdir(exist_ok=True)  # a user may have saved it already
    (checkout / "mywork" / "greetings.py").write_text(_block("python", "# mywork/greetings.py"))
    (checkout / "signoff.toml").write_text(_block("toml", "[capabilities.greet]"))
    env = {k: v for k, v in os.environ.items()
           if k not in {"VIRTUAL_ENV", "PYTHONPATH", "SIGNOFF_CONFIG", "DATABASE_URL"}}
    env |= {"HOME": str(home), "PIP_CACHE_DIR": _pip_cache(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = _make(checkout, env, "system-deps", "lint")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert (checkout / ".venv" / "bin" / "signoff").exists()
    # The test that read a home folder's sandbox as a security failure, run from the clone.
    done = subprocess.run(
        [str(checkout / ".venv" / "bin" / "pytest"), "-q", "-p", "no:cacheprovider",
         "tests/workloads/code_changes/test_sandbox.py", "-k", "hostile or without_the_sandbox"],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert re.search(r"\b4 passed\b", done.stdout), done.stdout[-1000:]
