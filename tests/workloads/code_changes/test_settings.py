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


def test_the_sandbox_is_on_by_default_and_its_keys_are_read(tmp_path: Path) -> None:
    plain = _load(tmp_path, "[workloads.code_changes]\n")
    assert plain.sandbox and plain.sandbox_network is True and plain.sandbox_bwrap == "bwrap"
    assert (plain.sandbox_env, plain.sandbox_read, plain.sandbox_hide) == ((), (), ())
    assert plain.network == "own" and plain.sandbox_pasta == "pasta"
    assert plain.sandbox_host_ports == ()
    s = _load(tmp_path, """
[workloads.code_changes]
sandbox_network = false
sandbox_bwrap = "/usr/bin/bwrap"
sandbox_env = ["ANTHROPIC_API_KEY"]
sandbox_read = ["/opt/agent", "tools"]
sandbox_hide = ["/srv/secrets"]
""")
    assert s.sandbox_network is False and s.network == "none"
    assert s.sandbox_env == ("ANTHROPIC_API_KEY",)
    assert s.sandbox_read == (Path("/opt/agent"), tmp_path / "tools")
    assert s.sandbox_hide == (Path("/srv/secrets"),) and s.sandbox_bwrap == "/usr/bin/bwrap"
    assert not _load(tmp_path, "[workloads.code_changes]\nsandbox = false\n").sandbox


def test_the_network_is_own_none_or_the_hosts_with_named_host_ports(tmp_path: Path) -> None:
    host = _load(tmp_path, '[workloads.code_changes]\nsandbox_network = "host"\n')
    assert host.sandbox_network == "host" and host.network == "host"
    ports = _load(tmp_path, "[workloads.code_changes]\nsandbox_host_ports = [8080, 11434, 8080]"
                            '\nsandbox_pasta = "/usr/local/bin/pasta"\n')
    assert ports.sandbox_host_ports == (8080, 11434) and ports.network == "own"
    assert ports.sandbox_pasta == "/usr/local/bin/pasta"


@pytest.mark.parametrize(("body", "env", "line"), [
    ("sandbox_host_ports = [5432]", {}, "sandbox_host_ports: 5432 is the database's port"),
    ("sandbox_host_ports = [8080, 6000]", {"DATABASE_URL": "postgresql://u@db.local:6000/q"},
     "sandbox_host_ports: 6000 is the database's port"),
    ("sandbox_host_ports = [7000]", {"DATABASE_URL": "host=x dbname=q", "PGPORT": "7000"},
     "sandbox_host_ports: 7000 is the database's port"),
    ("sandbox_host_ports = [8080]\nsandbox_network = false", {},
     "sandbox_host_ports: only with sandbox_network = true"),
    ('sandbox_host_ports = [8080]\nsandbox_network = "host"', {},
     "sandbox_host_ports: only with sandbox_network = true"),
    ("sandbox_host_ports = [0]", {}, "sandbox_host_ports: must be an array of at most 16"),
    ('sandbox_host_ports = ["8080"]', {}, "sandbox_host_ports: must be an array"),
    ("sandbox_host_ports = [true]", {}, "sandbox_host_ports: must be an array"),
    ("sandbox_host_ports = 8080", {}, "sandbox_host_ports: must be an array"),
    (f"sandbox_host_ports = {list(range(8000, 8017))}", {}, "sandbox_host_ports: must be"),
])
def test_host_ports_never_include_the_database(tmp_path: Path, body: str,
                                               env: dict[str, str], line: str) -> None:
    with pytest.raises(SettingsError) as err:
        _load(tmp_path, f"[workloads.code_changes]\n{body}\n", env)
    assert str(err.value).startswith(f"workloads.code_changes.{line}")
    assert "\n" not in str(err.value)
    # The same ports are fine when they are not the database's.
    assert _load(tmp_path, "[workloads.code_changes]\nsandbox_host_ports = [8080]\n",
                 env).sandbox_host_ports == (8080,)


@pytest.mark.parametrize(("body", "key"), [
    ('agent_command = ["a", "{instrucion}"]', "agent_command: unknown placeholder"),
    ('agent_command = "my-agent {instruction}"', "agent_command: must be an array"),
    ("agent_timeout_seconds = 0", "agent_timeout_seconds"),
    ('branch_prefix = "../x"', "branch_prefix"),
    ('colour = "blue"', "colour: unknown key"),
    ('[workloads.code_changes.github]\ntoken = "x"', "github.token: secrets never go"),
    ('[workloads.code_changes.github]\napi_url = "ftp://x"', "github.api_url"),
    ('sandbox = "no"', "sandbox: must be true or false"),
    ("sandbox_network = 0", 'sandbox_network: must be true, false or "host"'),
    ('sandbox_network = "none"', 'sandbox_network: must be true, false or "host"'),
    ('sandbox_pasta = ""', "sandbox_pasta: must be a non-empty"),
    ('sandbox_env = ["DATABASE_URL"]', "sandbox_env: 'DATABASE_URL' is not a variable"),
    ('sandbox_env = ["SIGNOFF_GITHUB_TOKEN"]', "sandbox_env: 'SIGNOFF_GITHUB_TOKEN' is not"),
    ('sandbox_env = ["PGPASSWORD"]', "sandbox_env: 'PGPASSWORD' is not"),
    ('sandbox_env = ["A B"]', "sandbox_env: 'A B' is not"),
    ('sandbox_read = "/opt"', "sandbox_read: must be an array"),
    ('sandbox_bwrap = ""', "sandbox_bwrap: must be a non-empty"),
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
