"""`signoff enqueue` writes the capability's configured settings first, or warns there are none."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cli_helpers import ERROR, Cli, count, last_id

CONFIG = """
[capabilities.greet]
handler = "mywork.greetings:send_greeting"
max_attempts = 7
lease_seconds = 120
"""


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG)
    return path


def test_enqueue_with_a_config_applies_its_settings_before_any_worker_ran(
    cli: Cli, config: Path
) -> None:
    proc = cli("enqueue", "greet", "--config", str(config), "--payload", '{"name": "Ada"}')
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    task = cli.show(last_id(proc.stdout))
    assert task["max_attempts"] == 7
    caps = {c["capability"]: c for c in cli.fast.json("caps", "ls", "--json")}
    assert caps["greet"]["max_attempts"] == 7 and caps["greet"]["lease_seconds"] == 120


def test_enqueue_reads_the_config_from_signoff_config_too(
    cli: Cli, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    proc = cli.fast("enqueue", "greet")
    assert proc.returncode == 0 and proc.stderr == ""
    assert cli.show(last_id(proc.stdout))["max_attempts"] == 7


def test_enqueue_without_settings_anywhere_warns_on_stderr_and_uses_the_defaults(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    proc = cli("enqueue", "greet")
    assert proc.returncode == 0
    assert proc.stdout.strip().isdigit()  # the id alone: the warning is not in stdout
    [warning] = proc.stderr.splitlines()
    assert warning == ("signoff: warning: capability 'greet' has no settings in the database "
                       "yet and no config file (--config or SIGNOFF_CONFIG): defaults apply "
                       "(max_attempts 3)")
    assert cli.show(last_id(proc.stdout))["max_attempts"] == 3


def test_enqueue_into_a_capability_with_settings_in_the_database_says_nothing(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    cli.fast.ok("caps", "set", "greet", "--max-attempts", "5")
    proc = cli.fast("enqueue", "greet")
    assert proc.returncode == 0 and proc.stderr == ""
    assert cli.show(last_id(proc.stdout))["max_attempts"] == 5


def test_a_config_that_does_not_name_the_capability_is_named_in_the_warning(
    cli: Cli, config: Path
) -> None:
    proc = cli.fast("enqueue", "other", "--config", str(config))
    assert proc.returncode == 0
    assert f"{config} has no [capabilities.other]: defaults apply" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_bad_config_stops_the_enqueue_and_writes_nothing(
    cli: Cli, dsn: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[capabilities.greet]\nhandler = "m:f"\nmax_attempts = "many"\n')
    line = cli.fails(ERROR, "enqueue", "greet", "--config", str(bad))
    assert "capabilities.greet.max_attempts" in line
    assert count(dsn, "SELECT count(*) FROM tasks") == 0
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0


def test_an_enqueue_refused_for_bad_input_writes_no_settings_and_no_warning(
    cli: Cli, dsn: str, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = cli.fails(ERROR, "enqueue", "greet", "--config", str(config),
                     "--priority", "3000000000")
    assert "priority" in line
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    assert "warning" not in cli.fails(ERROR, "enqueue", "greet", "--priority", "3000000000")
