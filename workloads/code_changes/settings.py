"""The workload's settings: `[workloads.code_changes]` of the service's config file.

The file is `$SIGNOFF_CONFIG` (or the `path` given). The GitHub token comes only from the
environment (`SIGNOFF_GITHUB_TOKEN`); a `token` key in the file is an error. A bad setting is
a `SettingsError` naming the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psycopg
from psycopg.conninfo import conninfo_to_dict

from taskqueue import ConfigError, ConfigSection, data_dir, secret_register_env, workload_section

__all__ = ["PLACEHOLDERS", "SECRET_ENV", "SECTION", "CodeSettings", "SettingsError",
           "load_settings"]

SECTION = "workloads.code_changes"
CONFIG_ENV = "SIGNOFF_CONFIG"
TOKEN_ENV = "SIGNOFF_GITHUB_TOKEN"
# Masked in every log line, error and message of the process (registered at import, when
# the service loads the handler, and again with the environment a load is given).
secret_register_env(TOKEN_ENV)
# What a command template may name; each is replaced inside one argv element, never a shell.
PLACEHOLDERS = frozenset({"instruction", "instruction_file", "worktree", "task_id", "branch"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")
_KEYS = {"workspace", "branch_prefix", "agent_command", "agent_timeout_seconds",
         "test_command", "test_timeout_seconds", "git_timeout_seconds", "author_name",
         "author_email", "output_tail_bytes", "log_max_bytes", "max_instruction_bytes",
         "allowed_repos", "github", "sandbox", "sandbox_network", "sandbox_bwrap",
         "sandbox_pasta", "sandbox_host_ports", "sandbox_env", "sandbox_read", "sandbox_hide"}
_GITHUB_KEYS = {"api_url", "repo", "timeout_seconds"}
_BRANCH_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,60}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,100}$")
# Never handed to the agent, even when named in sandbox_env: the queue's and Signoff's own.
SECRET_ENV = re.compile(r"^(DATABASE_URL|PG[A-Z]*|SIGNOFF_\w*|TELEGRAM_\w*)$")
MAX_HOST_PORTS = 16


class SettingsError(ConfigError):
    """A code-changes setting is missing or invalid."""


# The section's field checks (the core's, shared by every workload).
_CHECK = ConfigSection(SECTION, error=SettingsError,
                       secrets={"github.token": f"set {TOKEN_ENV}"})
_fail = _CHECK.fail


@dataclass(frozen=True)
class GitHubSettings:
    """Where pull requests are opened; `repo` (owner/name) is the default for every task."""

    api_url: str = "https://api.github.com"
    repo: str | None = None
    timeout: float = 30.0
    token: str = ""


@dataclass(frozen=True)
class CodeSettings:
    """Everything the handler and the janitor read besides the task."""

    workspace: Path
    agent_command: tuple[str, ...] = ()
    agent_timeout: float = 1800.0
    test_command: tuple[str, ...] = ()
    test_timeout: float = 900.0
    git_timeout: float = 300.0
    branch_prefix: str = "signoff/task-"
    author_name: str = "Signoff"
    author_email: str = "signoff@localhost"
    output_tail_bytes: int = 64 * 1024
    log_max_bytes: int = 256 * 1024 * 1024
    max_instruction_bytes: int = 20 * 1024
    allowed_repos: tuple[str, ...] = ()  # empty: any repository
    github: GitHubSettings | None = None
    sandbox: bool = True  # the agent and the tests run in bubblewrap (sandbox.py)
    # true: a network of its own through pasta (the outside, not the host's loopback);
    # false: none at all; "host": the host's network, loopback services included
    sandbox_network: bool | Literal["host"] = True
    sandbox_bwrap: str = "bwrap"
    sandbox_pasta: str = "pasta"
    sandbox_host_ports: tuple[int, ...] = ()  # host loopback TCP ports shown inside (a model)
    sandbox_env: tuple[str, ...] = ()  # more variables passed through (a model's API key)
    sandbox_read: tuple[Path, ...] = ()  # hidden paths shown again, read-only
    sandbox_hide: tuple[Path, ...] = ()  # more paths hidden

    @property
    def network(self) -> Literal["own", "host", "none"]:
        """Which network the sandbox gets (sandbox.py)."""
        if self.sandbox_network == "host":
            return "host"
        return "own" if self.sandbox_network else "none"


def load_settings(path: str | os.PathLike[str] | None = None,
                  env: Mapping[str, str] | None = None) -> CodeSettings:
    """Read the section from the config file (if any) and check it all."""
    env = os.environ if env is None else env
    secret_register_env(TOKEN_ENV, env=env)
    raw, file = workload_section("code_changes", path, env)
    base = file.parent if file is not None else Path.cwd()
    return build(raw, base, env)



def build(raw: Mapping[str, Any], base: Path, env: Mapping[str, str]) -> CodeSettings:
    """Settings from the section's raw table (paths relative to `base`)."""
    _CHECK.known(raw, _KEYS)
    workspace = raw.get("workspace")
    prefix = raw.get("branch_prefix", "signoff/task-")
    if not isinstance(prefix, str) or not _BRANCH_PREFIX.match(prefix) or ".." in prefix:
        raise _fail("branch_prefix", f"must be a plain branch-name prefix, not {prefix!r}")
    return CodeSettings(
        workspace=(_path(base, _CHECK.text(raw, "workspace", one_line=True))
                   if workspace is not None else data_dir(env) / "code_changes"),
        agent_command=_command(raw, "agent_command"),
        agent_timeout=_CHECK.seconds(raw, "agent_timeout_seconds", 1800.0),
        test_command=_command(raw, "test_command"),
        test_timeout=_CHECK.seconds(raw, "test_timeout_seconds", 900.0),
        git_timeout=_CHECK.seconds(raw, "git_timeout_seconds", 300.0),
        branch_prefix=prefix,
        author_name=_CHECK.text(raw, "author_name", "Signoff", one_line=True),
        author_email=_CHECK.text(raw, "author_email", "signoff@localhost", one_line=True),
        output_tail_bytes=_CHECK.positive(raw, "output_tail_bytes", 64 * 1024, whole=True),
        log_max_bytes=_CHECK.positive(raw, "log_max_bytes", 256 * 1024 * 1024, whole=True),
        max_instruction_bytes=_CHECK.positive(raw, "max_instruction_bytes", 20 * 1024, whole=True),
        allowed_repos=_strings(raw, "allowed_repos"),
        github=_github(raw.get("github"), env),
        **_sandbox(raw, base),
        **_network(raw, env),
    )


def _network(raw: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    network = raw.get("sandbox_network", True)
    if not isinstance(network, bool) and network != "host":
        raise _fail("sandbox_network", f'must be true, false or "host", not {network!r}')
    ports = raw.get("sandbox_host_ports", [])
    if (not isinstance(ports, list) or len(ports) > MAX_HOST_PORTS
            or not all(type(p) is int and 0 < p < 65536 for p in ports)):
        raise _fail("sandbox_host_ports", f"must be an array of at most {MAX_HOST_PORTS} "
                                          "TCP port numbers (1-65535)")
    if ports and network is not True:
        raise _fail("sandbox_host_ports", "only with sandbox_network = true (with \"host\" "
                                          "every local port is reachable, with false none)")
    if clash := sorted(set(ports) & database_ports(env)):
        raise _fail("sandbox_host_ports", f"{clash[0]} is the database's port; the agent must "
                                          "never reach PostgreSQL")
    return {"sandbox_network": network,
            "sandbox_pasta": _CHECK.text(raw, "sandbox_pasta", "pasta", one_line=True),
            "sandbox_host_ports": tuple(dict.fromkeys(ports))}


def database_ports(env: Mapping[str, str]) -> set[int]:
    """PostgreSQL's ports the agent must never be shown: 5432 always, and DATABASE_URL's
    (or PGPORT). The embedded server listens on a socket in the data folder, hidden anyway."""
    default = env.get("PGPORT", "5432")
    try:
        given = conninfo_to_dict(env.get("DATABASE_URL", "")).get("port") or default
    except psycopg.Error:  # a bad DSN is the queue's error to report, not this check's
        given = default
    return {int(p) for p in str(given).split(",") if p.strip().isdigit()} | {5432}


def _sandbox(raw: Mapping[str, Any], base: Path) -> dict[str, Any]:
    if not isinstance(raw.get("sandbox", True), bool):
        raise _fail("sandbox", f"must be true or false, not {raw['sandbox']!r}")
    names = _strings(raw, "sandbox_env")
    for name in names:
        if not _ENV_NAME.match(name) or SECRET_ENV.match(name):
            raise _fail("sandbox_env", f"{name!r} is not a variable the agent may get "
                                       "(a plain name, not the queue's or Signoff's secrets)")
    return {"sandbox": raw.get("sandbox", True),
            "sandbox_bwrap": _CHECK.text(raw, "sandbox_bwrap", "bwrap", one_line=True),
            "sandbox_env": names,
            "sandbox_read": tuple(_path(base, p) for p in _strings(raw, "sandbox_read")),
            "sandbox_hide": tuple(_path(base, p) for p in _strings(raw, "sandbox_hide"))}


def _path(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path




def _strings(table: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(key, "must be an array of non-empty strings")
    return tuple(value)


def _command(table: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A command template: an argv array whose elements may name PLACEHOLDERS."""
    argv = _strings(table, key)
    for element in argv:
        for name in _PLACEHOLDER.findall(element):
            if name not in PLACEHOLDERS:
                known = ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
                raise _fail(key, f"unknown placeholder {{{name}}}; expected one of {known}")
    return argv


def _github(raw: Any, env: Mapping[str, str]) -> GitHubSettings | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail("github", "must be a table with api_url (and optionally repo)")
    _CHECK.known(raw, _GITHUB_KEYS, prefix="github.")
    api_url = _CHECK.text(raw, "api_url", "https://api.github.com", one_line=True).rstrip("/")
    if not api_url.startswith(("http://", "https://")):
        raise _fail("github.api_url", f"must start with http:// or https://, not {api_url!r}")
    repo = raw.get("repo")
    if repo is not None and (not isinstance(repo, str) or repo.count("/") != 1):
        raise _fail("github.repo", f"must look like owner/name, not {repo!r}")
    return GitHubSettings(api_url=api_url, repo=repo,
                          timeout=_CHECK.seconds(raw, "timeout_seconds", 30.0, prefix="github."),
                          token=env.get(TOKEN_ENV, ""))


def render_command(template: tuple[str, ...], values: Mapping[str, str]) -> list[str]:
    """The argv for a template: each known placeholder replaced inside its own element."""
    return [_PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), element)
            for element in template]
