"""The workload's settings: the config file's section, env overrides, errors naming the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from taskqueue import ConfigError
from workloads.job_applications.settings import SettingsError, load_settings

SECTION = """
[workloads.job_applications]
profile = "profile.toml"
top = 10
artifacts = "/srv/signoff/artifacts"
browser_timeout_seconds = 45

[[workloads.job_applications.boards]]
kind = "greenhouse"
token = "nordwind"
company = "Nordwind Energie GmbH"

[[workloads.job_applications.boards]]
kind = "lever"
token = "fjord"
base_url = "http://127.0.0.1:9999/lever"

[workloads.job_applications.model]
base_url = "https://api.example.org/v1"
model = "small-model"
"""


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(text, "utf-8")
    return path


def test_settings_come_from_the_config_files_section(tmp_path: Path) -> None:
    path = _file(tmp_path, SECTION)
    settings = load_settings(env={"SIGNOFF_CONFIG": str(path), "SIGNOFF_MODEL_API_KEY": "sk-1"})
    assert settings.profile == tmp_path / "profile.toml"  # relative to the file
    assert settings.top == 10 and settings.browser_timeout == 45
    assert settings.artifacts == Path("/srv/signoff/artifacts")
    assert [(b.kind, b.token, b.company) for b in settings.boards] == [
        ("greenhouse", "nordwind", "Nordwind Energie GmbH"), ("lever", "fjord", "")]
    assert settings.boards[1].url == "http://127.0.0.1:9999/lever/v0/postings/fjord?mode=json"
    assert settings.model is not None and settings.model.api_key == "sk-1"
    assert settings.model.model == "small-model"


def test_environment_overrides_single_keys(tmp_path: Path) -> None:
    path = _file(tmp_path, SECTION)
    settings = load_settings(path, env={
        "SIGNOFF_JOBS_PROFILE": "/p.toml", "SIGNOFF_JOBS_TOP": "3",
        "SIGNOFF_JOBS_BOARDS": '[{"kind": "lever", "token": "x"}]',
        "SIGNOFF_MODEL_NAME": "other", "SIGNOFF_DATA_DIR": "/data"})
    assert settings.profile == Path("/p.toml") and settings.top == 3
    assert [b.token for b in settings.boards] == ["x"]
    assert settings.model is not None and settings.model.model == "other"


def test_without_a_file_the_environment_is_enough(tmp_path: Path) -> None:
    settings = load_settings(env={"SIGNOFF_JOBS_PROFILE": "/p.toml", "SIGNOFF_DATA_DIR": "/d"})
    assert settings.boards == () and settings.top == 15 and settings.model is None
    assert settings.artifacts == Path("/d/job_applications/artifacts")


@pytest.mark.parametrize(("text", "message"), [
    ("profile = 'p'\ntop = 0", "workloads.job_applications.top: must be a whole number above 0"),
    ("profile = 'p'\ntopp = 3", "workloads.job_applications.topp: unknown key"),
    ("top = 3", "workloads.job_applications.profile: required"),
    ("profile = 'p'\n[[workloads.job_applications.boards]]\nkind = 'indeed'\ntoken = 'x'",
     "boards[0].kind: must be greenhouse or lever, not 'indeed'"),
    ("profile = 'p'\n[[workloads.job_applications.boards]]\nkind = 'lever'",
     "boards[0].token: must be a non-empty string"),
    ("profile = 'p'\n[workloads.job_applications.model]\nbase_url = 'https://x'\nmodel = 'm'\n"
     "api_key = 'sk'", "model.api_key: secrets never go in the file; set SIGNOFF_MODEL_API_KEY"),
    ("profile = 'p'\n[workloads.job_applications.model]\nbase_url = 'ftp://x'\nmodel = 'm'",
     "model.base_url: must start with http:// or https://"),
])
def test_a_bad_setting_is_an_error_naming_the_key(tmp_path: Path, text: str,
                                                  message: str) -> None:
    path = _file(tmp_path, "[workloads.job_applications]\n" + text)
    with pytest.raises(SettingsError, match=re.escape(message)):
        load_settings(path, env={})


def test_a_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(SettingsError, match="SIGNOFF_JOBS_TOP: must be a number"):
        load_settings(env={"SIGNOFF_JOBS_PROFILE": "/p", "SIGNOFF_JOBS_TOP": "many"})


def test_a_missing_profile_stops_the_service_at_start_naming_key_and_file(
        tmp_path: Path) -> None:
    import subprocess
    import sys

    from taskqueue import load_config

    config = tmp_path / "signoff.toml"
    config.write_text(
        "[capabilities.job_applications]\n"
        'handler = "workloads.job_applications.handler:handle"\nmode = "tick"\n\n'
        '[workloads.job_applications]\nprofile = "nope.toml"\n')
    with pytest.raises(ConfigError, match=r"line 6: workloads\.job_applications\.profile: "
                                          r"no such file: .*nope\.toml"):
        load_config(config, env={})
    done = subprocess.run([sys.executable, "-m", "bot", "--config", str(config)],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": "/usr/bin:/bin", "DATABASE_URL": "postgresql://unused"})
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "no such file" in done.stderr and "nope.toml" in done.stderr
    # The shipped example names a profile that exists, so it starts as shipped.
    root = Path(__file__).resolve().parents[3]
    assert load_config(root / "signoff.example.toml", env={}).path is not None


def test_min_score_defaults_to_one_and_is_checked(tmp_path: Path) -> None:
    env = {"SIGNOFF_JOBS_PROFILE": "p.toml"}
    assert load_settings(env=env).min_score == 1
    assert load_settings(env={**env, "SIGNOFF_JOBS_MIN_SCORE": "25"}).min_score == 25
    path = _file(tmp_path, '[workloads.job_applications]\nprofile = "p.toml"\nmin_score = 101\n')
    with pytest.raises(SettingsError, match="min_score: must be a whole number from 0 to 100"):
        load_settings(path, env={})
