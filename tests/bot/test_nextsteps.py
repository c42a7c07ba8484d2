"""The started service's "first task" line: a command for the first configured capability,
with a payload its handler accepts, and the `signoff` that reaches this installation."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from bot.nextsteps import first_task, signoff_command, telegram_hint
from taskqueue import load_config
from tests.bot.test_service import CONFIG


def test_the_first_capability_gets_an_empty_payload_and_the_config_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("SIGNOFF_DATA_DIR", raising=False)
    path = tmp_path / "my config.toml"
    path.write_text(CONFIG)
    line = first_task(load_config(path, env={}))
    words = shlex.split(line)
    assert words[1:] == ["enqueue", "mail", "--config", str(path), "--payload", "{}"]
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:secret@db/x")
    assert first_task(load_config(path, env={})).endswith(
        " (in a shell with the same DATABASE_URL)")


def test_with_no_capability_it_names_init(tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text('timezone = "UTC"\n')
    assert " init` writes a first workload" in first_task(load_config(path, env={}))


def test_the_signoff_command_is_the_one_beside_this_python(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    beside = Path(sys.executable).parent / "signoff"
    assert beside.exists()
    monkeypatch.setenv("PATH", str(tmp_path))  # not on the PATH: its path
    monkeypatch.chdir(tmp_path)
    assert signoff_command() == shlex.quote(str(beside))
    monkeypatch.chdir(beside.parents[2])  # under the current folder: relative
    assert signoff_command() == str(beside.relative_to(beside.parents[2]))
    monkeypatch.setenv("PATH", str(beside.parent))  # on the PATH: its name
    assert signoff_command() == "signoff"


def test_the_telegram_line_names_the_variables_and_the_page() -> None:
    assert "TELEGRAM_BOT_TOKEN" in telegram_hint(False) and "docs/telegram.md" in telegram_hint(
        False)
    assert telegram_hint(True).startswith("Telegram is on")
