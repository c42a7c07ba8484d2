"""Every workload's numeric settings are bounded like the core's: nan, inf, a huge number or a
wait past 30 days is one error naming the key, then the file and line; the largest value
allowed still loads."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from taskqueue import MAX_SECONDS, ConfigError
from tests.taskqueue.cli_helpers import ROOT, count
from workloads.builds.settings import load_settings as builds_settings
from workloads.code_changes.settings import load_settings as code_settings
from workloads.job_applications.settings import load_settings as jobs_settings
from workloads.vm_ops.settings import load_settings as vm_settings

VM = ('[workloads.vm_ops]\ndriver = "libvirt"\nlibvirt_uri = "test:///default"\n'
      'allow_names = ["a"]\n')
JOBS = '[workloads.job_applications]\nprofile = "profile.toml"\n'
MODEL = ('[workloads.job_applications.model]\nbase_url = "http://127.0.0.1:1/v1"\n'
         'model = "m"\n')
CODE = "[workloads.code_changes]\n"
ROBLOX = "[workloads.roblox_build]\n"

Loader = Callable[[Path], Any]
LOADERS: dict[str, Loader] = {
    "vm_ops": lambda p: vm_settings(p, env={}),
    "job_applications": lambda p: jobs_settings(p, env={}),
    "code_changes": lambda p: code_settings(p, env={}),
    "roblox_build": lambda p: builds_settings("roblox_build", p, env={}),
}

# (workload, the section before the key, key, the line the key is on)
KEYS = [
    ("vm_ops", VM, "poll_seconds", 5),
    ("vm_ops", VM, "max_memory_mb", 5),
    ("job_applications", JOBS, "browser_timeout_seconds", 3),
    ("job_applications", JOBS, "top", 3),
    ("code_changes", CODE, "agent_timeout_seconds", 2),
    ("code_changes", CODE, "max_instruction_bytes", 2),
    ("roblox_build", ROBLOX, "timeout_seconds", 2),
    ("roblox_build", ROBLOX, "max_artifact_bytes", 2),
]


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(text, "utf-8")
    return path


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e300", "99999999999999999999"])
@pytest.mark.parametrize(("workload", "section", "key", "line"), KEYS)
def test_a_workloads_number_out_of_range_names_the_file_line_and_key(
        tmp_path: Path, workload: str, section: str, key: str, line: int, bad: str) -> None:
    path = _file(tmp_path, f"{section}{key} = {bad}\n")
    with pytest.raises(ConfigError) as err:
        LOADERS[workload](path)
    said = str(err.value)
    assert said.startswith(f"workloads.{workload}.{key}: must be "), said
    assert said.endswith(f" ({path}, line {line})"), said
    assert "\n" not in said and len(said) < 400


@pytest.mark.parametrize(("workload", "section", "key", "line"), KEYS)
def test_the_largest_value_allowed_still_loads(
        tmp_path: Path, workload: str, section: str, key: str, line: int) -> None:
    largest = MAX_SECONDS if key.endswith("seconds") else 10**12
    extra = MODEL if workload == "job_applications" else ""
    LOADERS[workload](_file(tmp_path, f"{section}{key} = {largest}\n{extra}"))
    with pytest.raises(ConfigError, match="at most"):
        LOADERS[workload](_file(tmp_path, f"{section}{key} = {largest + 1}\n{extra}"))


def test_the_models_temperature_is_a_number_from_0_to_2(tmp_path: Path) -> None:
    for bad in ("nan", "3", '"hot"', "-0.5"):
        path = _file(tmp_path, f"{JOBS}{MODEL}temperature = {bad}\n")
        with pytest.raises(ConfigError, match=r"^workloads\.job_applications\.model\."
                                              r"temperature: must be a number from 0 .*line 6\)$"):
            jobs_settings(path, env={})
    path = _file(tmp_path, f"{JOBS}{MODEL}temperature = 0.7\n")
    model = jobs_settings(path, env={}).model
    assert model is not None and model.temperature == 0.7


def test_an_environment_override_must_be_finite(tmp_path: Path) -> None:
    path = _file(tmp_path, JOBS)
    with pytest.raises(ConfigError, match="SIGNOFF_JOBS_TOP: must be a finite number"):
        jobs_settings(path, env={"SIGNOFF_JOBS_TOP": "nan"})
    assert jobs_settings(path, env={"SIGNOFF_JOBS_TOP": "7"}).top == 7


@pytest.mark.parametrize("command", ["worker", "bot"])
def test_a_workloads_bad_number_stops_the_real_commands_before_anything_is_written(
        dsn: str, tmp_path: Path, command: str) -> None:
    path = _file(tmp_path, "[capabilities.code_changes]\n"
                           "handler = 'workloads.code_changes.handler:handle'\n\n"
                           f"{CODE}agent_timeout_seconds = inf\n")
    argv = (["-m", "taskqueue", "worker", "--capability", "code_changes"]
            if command == "worker" else ["-m", "bot"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SIGNOFF_"))}
    done = subprocess.run([sys.executable, *argv, "--config", str(path)], cwd=ROOT,
                          env=env | {"DATABASE_URL": dsn}, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    [line] = done.stderr.splitlines()
    assert "workloads.code_changes.agent_timeout_seconds: must be a number above 0 and at " \
           f"most 2,592,000, not inf ({path}, line 5)" in line, line
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0


@pytest.mark.parametrize(("workload", "text", "key", "line"), [
    ("job_applications", f"{JOBS}{MODEL}timeout_seconds = inf\n", "model.timeout_seconds", 6),
    ("code_changes", f'{CODE}[workloads.code_changes.github]\napi_url = "https://x.example"\n'
                     "timeout_seconds = 0\n", "github.timeout_seconds", 4),
])
def test_a_key_of_a_sub_table_is_named_with_its_table_and_line(
        tmp_path: Path, workload: str, text: str, key: str, line: int) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        LOADERS[workload](path)
    said = str(err.value)
    assert said.startswith(f"workloads.{workload}.{key}: must be a number above 0"), said
    assert said.endswith(f" ({path}, line {line})"), said
