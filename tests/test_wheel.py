"""Signoff installs like a library: the wheel, installed into a fresh venv outside the
repository, carries its migrations and templates and runs `signoff migrate` + `enqueue`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_the_wheel_installs_and_migrates_a_fresh_database(tmp_path: Path,
                                                          empty_dsn: str) -> None:
    dist = tmp_path / "dist"
    # From a copy without build/: setuptools keeps files in build/lib that the tree no longer
    # has (a renamed .sql file would ship twice), as a fresh clone has none.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "node_modules"))
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", dist, source, cwd=tmp_path)
    [wheel] = dist.glob("signoff-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("taskqueue/store/migrations/0001_initial.sql",
                    "taskqueue/store/sql/claim.sql",
                    "bot/telegram/migrations/0001_messages.sql",
                    "bot/telegram/templates/approval.html.j2",
                    "bot/web/migrations/0001_accounts.sql", "bot/web/static/app.js",
                    "bot/web/templates/inbox.html", "bot/web/templates/requests/generic.html",
                    "workloads/job_applications/templates/cv.tex.j2",
                    "taskqueue/cli/starter/signoff.example.toml",
                    "taskqueue/cli/starter/signoff.toml",
                    "taskqueue/cli/starter/greetings.py.txt",
                    "taskqueue/cli/starter/profile.example.toml"):
        assert shipped in names, shipped
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    _run(venv / "bin" / "pip", "install", "-q", wheel, cwd=tmp_path)
    env = {"PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "DATABASE_URL": empty_dsn,
           "HOME": str(tmp_path)}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert _run("signoff", "migrate", cwd=outside, env=env).stdout.startswith("applied 0001")
    assert _run("signoff", "enqueue", "demo", "--payload", "{}", cwd=outside,
                env=env).stdout == "1\n"
    _run("signoff", "init", "--full", "full", cwd=outside, env=env)
    assert (outside / "full" / "signoff.toml").read_text() == (
        ROOT / "signoff.example.toml").read_text()
    # What --full writes passes its own checks (the dry run loads and checks the config).
    _run("signoff", "produce", "job_applications", "--dry-run", "--config",
         "full/signoff.toml", cwd=outside, env=env)
    help_text = _run(venv / "bin" / "python", "-m", "bot", "--help", cwd=outside, env=env)
    assert "--config" in help_text.stdout
