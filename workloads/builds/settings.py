"""The build workloads' settings: `[workloads.ios_build]` / `[workloads.roblox_build]` of the
service's config file (`SIGNOFF_CONFIG`). Secrets come only from the environment.

A command is a TOML array of strings (never a shell string); its items may use the
placeholders in PLACEHOLDERS. A bad setting is a `SettingsError` naming the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from taskqueue import (
    ConfigError,
    ConfigSection,
    data_dir,
    secret_register,
    secret_register_env,
    workload_section,
)

__all__ = ["PLACEHOLDERS", "BuildSettings", "SettingsError", "load_settings"]

CONFIG_ENV = "SIGNOFF_CONFIG"
# The publish keys (roblox.KEY_ENV, ios.ASC_ENV), masked in every log line, error and
# message of the process; the App Store key file's body too.
SECRET_ENV = ("SIGNOFF_ROBLOX_API_KEY", "SIGNOFF_ASC_KEY_ID", "SIGNOFF_ASC_ISSUER_ID")
KEY_FILE_ENV = "SIGNOFF_ASC_KEY_PATH"
PLACEHOLDERS = frozenset({"workspace", "output", "commit", "branch", "artifact"})
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# Keys every build capability reads, and each one's own.
_COMMON = {"command", "artifacts", "work_dir", "store", "timeout_seconds", "git_timeout_seconds",
           "log_max_bytes", "log_tail_bytes", "max_artifact_bytes", "publish_approvals"}
_OWN = {
    "ios_build": {"upload_command", "upload_timeout_seconds"},
    "roblox_build": {"base_url", "universe_id", "place_id", "version_type",
                     "publish_timeout_seconds", "retry_after_cap_seconds",
                     "max_publish_retries"},
}
# Keys refused in the file: the publish keys come only from the environment.
_FILE_SECRETS = ("api_key", "key_id", "issuer_id", "key_path")
DEFAULTS: dict[str, dict[str, Any]] = {
    "ios_build": {
        "command": ["fastlane", "gym", "--output_directory", "{output}"],
        "artifacts": ["*.ipa"],
        "upload_command": ["fastlane", "pilot", "upload", "--ipa", "{artifact}"],
    },
    "roblox_build": {
        "command": ["rojo", "build", "{workspace}", "--output", "{output}/place.rbxl"],
        "artifacts": ["*.rbxl", "*.rbxlx"],
        "base_url": "https://apis.roblox.com",
        # The publish reads the place into memory (it hashes the bytes it sends).
        "max_artifact_bytes": 100_000_000,
    },
}


class SettingsError(ConfigError):
    """A build setting is missing or invalid."""


@dataclass(frozen=True)
class BuildSettings:
    """Everything a build handler reads besides the task (sizes in bytes, times in seconds)."""

    capability: str
    command: tuple[str, ...]
    artifacts: tuple[str, ...]
    work_dir: Path
    store: Path
    timeout: float = 3600.0
    git_timeout: float = 600.0
    log_max_bytes: int = 50_000_000
    log_tail_bytes: int = 8_000
    max_artifact_bytes: int = 4_000_000_000
    # The publish side: `upload_command` for iOS; the Open Cloud target for Roblox.
    upload_command: tuple[str, ...] = ()
    upload_timeout: float = 1800.0
    base_url: str = "https://apis.roblox.com"
    universe_id: int | None = None
    place_id: int | None = None
    version_type: str = "Published"
    publish_timeout: float = 300.0
    retry_after_cap: float = 300.0
    max_publish_retries: int = 5
    # Four eyes: distinct people who must approve a publish (1 to 10; 2 for four eyes).
    publish_approvals: int = 1


def register_secrets(env: Mapping[str, str]) -> None:
    """Mask the publish keys, and the lines of the App Store key file (a PEM's body)."""
    secret_register_env(*SECRET_ENV, env=env)
    if key_path := env.get(KEY_FILE_ENV):
        try:
            text = Path(key_path).read_text("utf-8", "replace")
        except OSError:
            return  # the upload step says what is wrong with the file
        secret_register(*(line for line in text.splitlines() if not line.startswith("-----")))


register_secrets(os.environ)  # at import: when the service loads the handler


def load_settings(capability: str, path: str | os.PathLike[str] | None = None,
                  env: Mapping[str, str] | None = None) -> BuildSettings:
    """Read `[workloads.<capability>]` from the config file (if any) and check it."""
    env = os.environ if env is None else env
    register_secrets(env)
    section, file = workload_section(capability, path, env)
    raw = {**DEFAULTS[capability], **section}
    base = file.parent if file is not None else Path.cwd()
    return _build(capability, raw, base, env)


class _Reader:
    """The section's reads: the core's field checks plus commands, globs and paths."""

    def __init__(self, capability: str, raw: Mapping[str, Any]) -> None:
        self.capability, self.raw = capability, raw
        self.check = ConfigSection(f"workloads.{capability}", error=SettingsError,
                                   secrets=dict.fromkeys(_FILE_SECRETS, "see the README"))
        self.fail = self.check.fail

    def command(self, key: str, allowed: frozenset[str]) -> tuple[str, ...]:
        value = self.raw.get(key)
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, str) and v for v in value)):
            raise self.fail(key, "must be a non-empty array of strings (never a shell string)")
        for item in value:
            for name in _PLACEHOLDER.findall(item):
                if name not in allowed:
                    raise self.fail(key, f"unknown placeholder {{{name}}}; allowed: "
                                         + ", ".join(sorted(allowed)))
        return tuple(value)

    def globs(self, key: str) -> tuple[str, ...]:
        value = self.raw.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a non-empty array of glob patterns")
        for pattern in value:
            if not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
                raise self.fail(key, f"{pattern!r} must be relative to the output folder")
        return tuple(value)

    def number(self, key: str, default: float, *, whole: bool = False) -> Any:
        return self.check.positive(self.raw, key, default, whole=whole)

    def seconds(self, key: str, default: float) -> Any:
        return self.check.seconds(self.raw, key, default)

    def path(self, key: str, base: Path, default: Path) -> Path:
        value = self.raw.get(key)
        if value is None:
            return default
        path = Path(self.check.text(self.raw, key)).expanduser()
        return path if path.is_absolute() else base / path

    def text(self, key: str, default: str) -> str:
        return self.check.text(self.raw, key, default)


def _build(capability: str, raw: Mapping[str, Any], base: Path,
           env: Mapping[str, str]) -> BuildSettings:
    r = _Reader(capability, raw)
    r.check.known(raw, _COMMON | _OWN[capability])
    home = data_dir(env) / "builds"
    settings = BuildSettings(
        capability=capability,
        command=r.command("command", PLACEHOLDERS - {"artifact"}),
        artifacts=r.globs("artifacts"),
        work_dir=r.path("work_dir", base, home / "work"),
        store=r.path("store", base, home / "artifacts"),
        timeout=r.seconds("timeout_seconds", 3600.0),
        git_timeout=r.seconds("git_timeout_seconds", 600.0),
        log_max_bytes=r.number("log_max_bytes", 50_000_000, whole=True),
        log_tail_bytes=r.number("log_tail_bytes", 8_000, whole=True),
        max_artifact_bytes=r.number("max_artifact_bytes", 4_000_000_000, whole=True),
        publish_approvals=r.number("publish_approvals", 1, whole=True),
    )
    if not 1 <= settings.publish_approvals <= 10:
        raise r.fail("publish_approvals", f"must be 1 to 10, not {settings.publish_approvals}")
    if capability == "ios_build":
        return _ios(r, settings)
    return _roblox(r, settings)


def _ios(r: _Reader, s: BuildSettings) -> BuildSettings:
    return replace(s, upload_command=r.command("upload_command", PLACEHOLDERS),
                   upload_timeout=r.seconds("upload_timeout_seconds", 1800.0))


def _roblox(r: _Reader, s: BuildSettings) -> BuildSettings:
    base_url = r.text("base_url", "https://apis.roblox.com").rstrip("/")
    if not base_url.startswith(("https://", "http://")):
        raise r.fail("base_url", f"must start with https:// (or http:// for tests), "
                                 f"not {base_url!r}")
    version_type = r.text("version_type", "Published")
    if version_type not in ("Published", "Saved"):
        raise r.fail("version_type", f"must be Published or Saved, not {version_type!r}")
    ids = {k: r.raw.get(k) for k in ("universe_id", "place_id")}
    for key, value in ids.items():
        if value is not None:
            r.number(key, 1, whole=True)
    return replace(s, base_url=base_url, version_type=version_type,
                   universe_id=ids["universe_id"], place_id=ids["place_id"],
                   publish_timeout=r.seconds("publish_timeout_seconds", 300.0),
                   retry_after_cap=r.seconds("retry_after_cap_seconds", 300.0),
                   max_publish_retries=r.number("max_publish_retries", 5, whole=True))
