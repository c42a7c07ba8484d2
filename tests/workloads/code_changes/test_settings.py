"""The `[workloads.code_changes]` settings: defaults, templates, and errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue import load_config
from workloads.code_changes.settings import SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[3]


def _load(tmp_path: Path, body: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    path = tmp_path / "signoff.toml"
    path.write_text(body)
    return load_settings(path, env=env or {})


def test_defaults_put_the_workspace_in_the_data_folder(tmp_path: Path) -> None:
    settings = load_settings(None, env={"SIGNOFF_DATA_DIR": str(tmp_path)})
    assert settings.workspace == tmp_path / "code_changes"
    assert settings.branch_prefix == "signoff/task-" and settings.github is None
    assert settings.max_instruction_bytes == 20 * 1024


def test_a_full_section_and_the_token_from_the_environment(tmp_path: Path) -> None:
    settings = _load(tmp_path, """
[workloads.code_changes]
workspace = "ws"
agent_command = ["my-agent", "--prompt-file", "{instruction_file}", "--cwd={worktree}"]
test_command = ["make", "test"]
branch_prefix = "bot/"
[workloads.code_changes.github]
api_url = "http://127.0.0.1:9/"
repo = "acme/widgets"
""", env={"SIGNOFF_GITHUB_TOKEN": "s3cret"})
    assert settings.workspace == tmp_path / "ws"
    assert settings.agent_command[2] == "{instruction_file}"
    assert settings.github is not None and settings.github.token == "s3cret"
    assert settings.github.api_url == "http://127.0.0.1:9"


@pytest.mark.parametrize(("body", "key"), [
    ('agent_command = ["a", "{instrucion}"]', "agent_command: unknown placeholder"),
    ('agent_command = "my-agent {instruction}"', "agent_command: must be an array"),
    ("agent_timeout_seconds = 0", "agent_timeout_seconds"),
    ('branch_prefix = "../x"', "branch_prefix"),
    ('colour = "blue"', "colour: unknown key"),
    ('[workloads.code_changes.github]\ntoken = "x"', "github.token: secrets never go"),
    ('[workloads.code_changes.github]\napi_url = "ftp://x"', "github.api_url"),
])
def test_mistakes_name_the_key(tmp_path: Path, body: str, key: str) -> None:
    with pytest.raises(SettingsError, match=f"workloads.code_changes.{key}"):
        _load(tmp_path, f"[workloads.code_changes]\n{body}\n")


def test_the_example_config_loads_and_keeps_the_capability_external() -> None:
    example = ROOT / "signoff.example.toml"
    config = load_config(example, env={})
    cap = config.capability("code_changes")
    assert cap is not None and cap.mode == "external"
    assert (cap.max_running, cap.max_parked) == (1, 5)
    assert [p.function for p in cap.producers] == ["workloads.code_changes.janitor:janitor"]
    settings = load_settings(example, env={})
    assert "{instruction_file}" in settings.agent_command
