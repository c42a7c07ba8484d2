"""The workload's settings: `[workloads.job_applications]` of the service's config file, then env.

The file is the one the service reads (`SIGNOFF_CONFIG`, or the `path` given). Environment
variables override single keys (tests use them); the model's API key comes only from the
environment (`SIGNOFF_MODEL_API_KEY`). A bad setting is a `SettingsError` naming the key.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskqueue import (
    Config,
    ConfigError,
    ConfigSection,
    data_dir,
    secret_register_env,
    workload_section,
)
from workloads.job_applications.boards import DEFAULT_BASE_URLS, BoardConfig
from workloads.job_applications.model_drafter import ModelConfig

__all__ = ["SECTION", "JobSettings", "SettingsError", "check_config", "default_artifacts",
           "load_settings"]

SECTION = "workloads.job_applications"
CONFIG_ENV = "SIGNOFF_CONFIG"
KEY_ENV = "SIGNOFF_MODEL_API_KEY"
# Masked in every log line, error and message of the process (registered at import, when
# the service loads the handler, and again with the environment a load is given).
secret_register_env(KEY_ENV)
DEFAULT_TOP = 15
# A posting scoring below this (0-100) is never enqueued; 1 keeps out postings sharing no
# term with the profile at all.
DEFAULT_MIN_SCORE = 1
DEFAULT_BROWSER_TIMEOUT = 30.0
DEFAULT_BOARD_TIMEOUT = 30.0
_KEYS = {"profile", "boards", "top", "min_score", "artifacts", "browser_timeout_seconds",
         "board_timeout_seconds", "cv_max_pages", "model"}
_BOARD_KEYS = {"kind", "token", "company", "base_url"}
_MODEL_KEYS = {"base_url", "model", "timeout_seconds", "temperature"}
# Key -> environment variable that overrides it.
ENV = {
    "profile": "SIGNOFF_JOBS_PROFILE",
    "boards": "SIGNOFF_JOBS_BOARDS",  # a JSON array of board tables
    "top": "SIGNOFF_JOBS_TOP",
    "min_score": "SIGNOFF_JOBS_MIN_SCORE",
    "artifacts": "SIGNOFF_JOBS_ARTIFACTS",
    "browser_timeout_seconds": "SIGNOFF_JOBS_BROWSER_TIMEOUT",
    "model.base_url": "SIGNOFF_MODEL_BASE_URL",
    "model.model": "SIGNOFF_MODEL_NAME",
}


class SettingsError(ConfigError):
    """A job-application setting is missing or invalid."""


# The section's field checks (the core's, shared by every workload).
_CHECK = ConfigSection(SECTION, error=SettingsError,
                       secrets={"model.api_key": f"set {KEY_ENV}"})
_fail = _CHECK.fail


@dataclass(frozen=True)
class JobSettings:
    """Everything the producer and the handler read besides the task."""

    profile: Path
    boards: tuple[BoardConfig, ...]
    top: int = DEFAULT_TOP
    min_score: int = DEFAULT_MIN_SCORE
    artifacts: Path = Path("artifacts")
    browser_timeout: float = DEFAULT_BROWSER_TIMEOUT
    board_timeout: float = DEFAULT_BOARD_TIMEOUT
    cv_max_pages: int = 2
    model: ModelConfig | None = None


def check_config(config: Config) -> None:
    """At start: the section parses and the profile it names can be read and is valid, so
    a missing profile stops the service with one line instead of failing tasks later."""
    from workloads.job_applications.profile import load_profile

    settings = load_settings(config.path) if config.path else load_settings()
    line = config.checker().line_of(("workloads", "job_applications", "profile"))
    where = f"{config.path}, line {line}: " if config.path and line else ""
    if not settings.profile.is_file():
        raise SettingsError(f"{where}{SECTION}.profile: no such file: {settings.profile}")
    try:
        load_profile(settings.profile)
    except (ConfigError, ValueError) as exc:
        raise SettingsError(f"{where}{SECTION}.profile: {exc}") from None


def default_artifacts(env: Mapping[str, str]) -> Path:
    """Beside the embedded database, in Signoff's data folder (taskqueue.data_dir)."""
    return data_dir(env) / "job_applications" / "artifacts"


def load_settings(path: str | os.PathLike[str] | None = None,
                  env: Mapping[str, str] | None = None) -> JobSettings:
    """Read the section from the config file (if any), apply env overrides, check it all."""
    env = os.environ if env is None else env
    secret_register_env(KEY_ENV, env=env)
    raw, file = workload_section("job_applications", path, env)
    raw = _overrides(raw, env)
    base = file.parent if file is not None else Path.cwd()
    return _build(raw, base, env)


def _overrides(raw: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    out = dict(raw)
    model = dict(out.get("model", {})) if isinstance(out.get("model", {}), dict) else {}
    for key, var in ENV.items():
        value = env.get(var)
        if not value:
            continue
        if key.startswith("model."):
            model[key.removeprefix("model.")] = value
        elif key == "boards":
            out[key] = _json(var, value)
        elif key in ("top", "min_score", "browser_timeout_seconds"):
            out[key] = _number(var, value)
        else:
            out[key] = value
    if model:
        out["model"] = model
    return out


def _json(var: str, value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError as exc:
        raise SettingsError(f"{var}: not valid JSON: {exc}") from None


def _number(var: str, value: str) -> float | int:
    try:
        number = float(value)
    except ValueError:
        raise SettingsError(f"{var}: must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise SettingsError(f"{var}: must be a finite number, not {value!r}")
    return int(number) if number.is_integer() else number



def _build(raw: Mapping[str, Any], base: Path, env: Mapping[str, str]) -> JobSettings:
    _CHECK.known(raw, _KEYS)
    if "profile" not in raw:
        raise _fail("profile", f"required: the candidate profile file (or {ENV['profile']})")
    artifacts = raw.get("artifacts")
    return JobSettings(
        profile=_path(base, _CHECK.text(raw, "profile")),
        boards=_boards(raw.get("boards", [])),
        top=_CHECK.positive(raw, "top", DEFAULT_TOP, whole=True),
        min_score=_CHECK.whole(raw, "min_score", DEFAULT_MIN_SCORE, 0, 100),
        artifacts=(_path(base, _CHECK.text(raw, "artifacts")) if artifacts
                   else default_artifacts(env)),
        browser_timeout=_CHECK.seconds(raw, "browser_timeout_seconds", DEFAULT_BROWSER_TIMEOUT),
        board_timeout=_CHECK.seconds(raw, "board_timeout_seconds", DEFAULT_BOARD_TIMEOUT),
        cv_max_pages=_CHECK.positive(raw, "cv_max_pages", 2, whole=True),
        model=_model(raw.get("model"), env),
    )


def _path(base: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path





def _boards(raw: Any) -> tuple[BoardConfig, ...]:
    if not isinstance(raw, list):
        raise _fail("boards", "must be an array of tables ([[workloads.job_applications.boards]])")
    boards = []
    for i, item in enumerate(raw):
        where = f"boards[{i}]."
        if not isinstance(item, dict):
            raise _fail(f"boards[{i}]", "must be a table with kind and token")
        _CHECK.known(item, _BOARD_KEYS, prefix=where)
        kind = _CHECK.text(item, "kind", prefix=where)
        if kind not in DEFAULT_BASE_URLS:
            raise _fail(f"{where}kind", f"must be greenhouse or lever, not {kind!r}")
        boards.append(BoardConfig(kind, _CHECK.text(item, "token", prefix=where),  # type: ignore[arg-type]
                                  str(item.get("company", "")), str(item.get("base_url", ""))))
    return tuple(boards)


def _model(raw: Any, env: Mapping[str, str]) -> ModelConfig | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail("model", "must be a table with base_url and model")
    _CHECK.known(raw, _MODEL_KEYS, prefix="model.")
    base_url = _CHECK.text(raw, "base_url", prefix="model.")
    if not base_url.startswith(("http://", "https://")):
        raise _fail("model.base_url", f"must start with http:// or https://, not {base_url!r}")
    return ModelConfig(
        base_url=base_url,
        api_key=env.get(KEY_ENV, ""),
        model=_CHECK.text(raw, "model", prefix="model."),
        timeout=_CHECK.seconds(raw, "timeout_seconds", 60.0, prefix="model."),
        temperature=_CHECK.number(raw, "temperature", 0.2, 0, 2, prefix="model."),
    )
