"""`signoff init`: the starter files, the full example, and refusing to overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue.config.settings import load_config

from .cli_helpers import ERROR, OK, ROOT, Cli


@pytest.fixture
def cli() -> Cli:
    return Cli("postgresql://unused")  # init never opens the database


def test_init_writes_a_config_the_worker_accepts(cli: Cli, tmp_path: Path) -> None:
    done = cli.fast("init", str(tmp_path / "new"))
    assert done.returncode == OK, done.stderr
    config = load_config(tmp_path / "new" / "signoff.toml", env={}, imports=False)
    assert config.capabilities["greet"].handler == "mywork.greetings:send_greeting"
    assert (tmp_path / "new" / "mywork" / "greetings.py").exists()
    assert done.stdout.splitlines() == [f"wrote {tmp_path / 'new' / 'signoff.toml'}",
                                        f"wrote {tmp_path / 'new' / 'mywork' / 'greetings.py'}"]


def test_init_full_writes_the_example_config(cli: Cli, tmp_path: Path) -> None:
    assert cli.fast("init", "--full", str(tmp_path)).returncode == OK
    written = tmp_path / "signoff.toml"
    assert written.read_text() == (ROOT / "signoff.example.toml").read_text()
    assert not (tmp_path / "mywork").exists()
    # Its own keys check; its workloads' files (profile.example.toml) are found relative
    # to the file, so those checks need the checkout beside it.
    assert load_config(written, env={}, imports=False).capabilities


def test_init_refuses_to_overwrite_unless_forced(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "signoff.toml").write_text("# mine\n")
    done = cli.fast("init", str(tmp_path))
    assert done.returncode == ERROR
    assert done.stderr.count("\n") == 1 and "--force" in done.stderr
    assert (tmp_path / "signoff.toml").read_text() == "# mine\n"
    assert not (tmp_path / "mywork").exists()  # nothing written
    assert cli.fast("init", "--force", str(tmp_path)).returncode == OK
    assert "[capabilities.greet]" in (tmp_path / "signoff.toml").read_text()
