"""`signoff init`: the starter files, the full example, and refusing to overwrite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskqueue.config.settings import load_config

from ..cli_helpers import ERROR, OK, ROOT, Cli

PROFILE = ROOT / "workloads" / "job_applications" / "profile.example.toml"


@pytest.fixture
def cli() -> Cli:
    return Cli("postgresql://unused")  # init never opens the database


def test_init_writes_a_config_the_worker_accepts(cli: Cli, tmp_path: Path) -> None:
    done = cli.fast("init", str(tmp_path / "new"))
    assert done.returncode == OK, done.stderr
    config = load_config(tmp_path / "new" / "signoff.toml", env={}, imports=False)
    assert config.capabilities["greet"].handler == "mywork.greetings:send_greeting"
    assert config.sections["http"] == {"listen": "auto"}  # the inbox, where the service says
    assert (tmp_path / "new" / "mywork" / "greetings.py").exists()
    assert done.stdout.splitlines() == [f"wrote {tmp_path / 'new' / 'signoff.toml'}",
                                        f"wrote {tmp_path / 'new' / 'mywork' / 'greetings.py'}"]


def test_init_full_writes_the_example_config(cli: Cli, tmp_path: Path) -> None:
    done = cli.fast("init", "--full", str(tmp_path))
    assert done.returncode == OK
    written = tmp_path / "signoff.toml"
    profile = tmp_path / "workloads" / "job_applications" / "profile.example.toml"
    assert done.stdout.splitlines() == [f"wrote {written}", f"wrote {profile}"]
    assert written.read_text() == (ROOT / "signoff.example.toml").read_text()
    assert profile.read_text() == PROFILE.read_text()
    assert not (tmp_path / "mywork").exists()


def test_init_full_passes_its_own_checks_in_an_empty_folder(tmp_path: Path) -> None:
    # Outside the checkout, as a user of the wheel: the full config loads with every
    # capability's handler imported and every workload's check run (the dry run opens no
    # database), the profile it names found beside it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    env["DATABASE_URL"] = "postgresql://unused"

    def signoff(*args: str) -> subprocess.CompletedProcess[str]:
        # -P: as the `signoff` script runs, without the folder first on sys.path, where
        # the profile's workloads/ folder would hide an editable install's `workloads`.
        return subprocess.run([sys.executable, "-P", "-m", "taskqueue", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=60,
                              check=False)

    assert signoff("init", "--full").returncode == OK
    config = load_config(tmp_path / "signoff.toml", env={}, imports=False)
    for capability, cap in config.capabilities.items():
        if cap.producers:
            done = signoff("produce", capability, "--dry-run", "--config", "signoff.toml")
            assert done.returncode == OK, done.stderr
            assert done.stderr == "" and f"({capability}) cron" in done.stdout


def test_the_packaged_profile_is_the_workloads_example() -> None:
    from taskqueue.cli.init import packaged

    assert packaged("profile.example.toml") == PROFILE.read_text()


def test_init_refuses_to_overwrite_unless_forced(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "signoff.toml").write_text("# mine\n")
    done = cli.fast("init", str(tmp_path))
    assert done.returncode == ERROR
    assert done.stderr.count("\n") == 1 and "--force" in done.stderr
    assert (tmp_path / "signoff.toml").read_text() == "# mine\n"
    assert not (tmp_path / "mywork").exists()  # nothing written
    assert cli.fast("init", "--force", str(tmp_path)).returncode == OK
    assert "[capabilities.greet]" in (tmp_path / "signoff.toml").read_text()
