"""Reading the config file, bounded: hostile files (deep nesting, huge numbers, nan and inf,
out-of-range values, a huge or binary file) are one line and exit 1 through the real
commands, with nothing written; real configs still load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskqueue import ConfigError, load_config, workload_section
from taskqueue.config.reader import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, nesting_line
from tests.taskqueue.cli_helpers import ROOT, count

H = "tests.taskqueue.handlers_for_tests"
CAP = f"[capabilities.x]\nhandler = '{H}:quick'\n"
DEEP = 5000

# (id, file content, what the one line says, which commands read it: the worker ignores
# the service's own tables, [http] and [telegram]).
HOSTILE: list[tuple[str, str | bytes, str, tuple[str, ...]]] = [
    ("deep-array", "a = " + "[" * DEEP + "]" * DEEP + "\n",
     "line 1: nested deeper than 32 levels", ("worker", "bot")),
    ("deep-inline-table", "a = " + "{b = " * DEEP + "1" + "}" * DEEP + "\n",
     "line 1: nested deeper than 32 levels", ("worker", "bot")),
    ("deep-array-in-a-workload", "[workloads.briefing]\nx = 1\ny = " + "[" * 40 + "]" * 40,
     "line 3: nested deeper than 32 levels", ("worker", "bot")),
    ("deep-dotted-key", "a" + ".b" * DEEP + " = 1\n",
     "line 1: a.b.b.b", ("worker", "bot")),
    ("deep-table-header", "[" + ".".join(["t"] * 40) + "]\nx = 1\n",
     "line 1: t.t.t", ("worker", "bot")),
    ("deep-dotted-workload", "[workloads.vm_ops]\n" + "a" + ".b" * 40 + " = 1\n",
     "line 2: workloads.vm_ops.a.b.b", ("worker", "bot")),
    ("retention-nan", "[retention]\ndays = nan\n",
     "line 2: retention.days: must be a finite number, not nan", ("worker", "bot")),
    ("audit-inf", "[retention]\naudit_days = inf\n",
     "line 2: retention.audit_days: must be a finite number, not inf", ("worker", "bot")),
    ("poll-minus-inf", "[worker]\npoll_interval_seconds = -inf\n",
     "line 2: worker.poll_interval_seconds: must be a finite number", ("worker", "bot")),
    ("grace-negative", "[worker]\ngrace_seconds = -1\n",
     "line 2: worker.grace_seconds: must be at least 0 (and at most 86400), not -1",
     ("worker", "bot")),
    ("reaper-huge", "[reaper]\ninterval_minutes = 1e300\n",
     "line 2: reaper.interval_minutes: must be at most 1440", ("worker", "bot")),
    ("misfire-5000-digits", "[scheduler]\nmisfire_grace_seconds = " + "9" * DEEP + "\n",
     "invalid TOML: a number with thousands of digits", ("worker", "bot")),
    ("misfire-40-digits", "[scheduler]\nmisfire_grace_seconds = " + "9" * 40 + "\n",
     "line 2: scheduler.misfire_grace_seconds: must be at most 2592000", ("worker", "bot")),
    ("caps-past-the-column", CAP + "max_running = 99999999999\n",
     "line 3: capabilities.x.max_running: must be at most 2147483647", ("worker", "bot")),
    ("cap-retention-nan", CAP + "retention_days = nan\n",
     "line 3: capabilities.x.retention_days: must be a finite number", ("worker", "bot")),
    ("cap-lease-zero", CAP + "lease_seconds = 0\n",
     "line 3: capabilities.x.lease_seconds: must be at least 1 (and at most 2592000)",
     ("worker", "bot")),
    ("json-depth", "[limits]\nmax_json_depth = 100000\n",
     "line 2: limits.max_json_depth: must be at most 500", ("worker", "bot")),
    ("signals-negative", "[signals]\nnudge_age_hours = -0.5\n",
     "line 2: signals.nudge_age_hours: must be at least 0 (and at most 8760)", ("worker", "bot")),
    ("huge-file", "# " + "x" * MAX_CONFIG_BYTES + "\n", "larger than 1024 KiB",
     ("worker", "bot")),
    ("not-utf8", b"timezone = '\xff\xfe'\n", "not UTF-8 text (byte 12)", ("worker", "bot")),
    ("http-timeout-inf", "[http]\nscrape_timeout_seconds = inf\n",
     "line 2: http.scrape_timeout_seconds: must be a finite number", ("bot",)),
    ("telegram-items-huge", "[telegram]\ndigest_max_items = 99999999\n",
     "line 2: telegram.digest_max_items: must be at most 1000", ("bot",)),
]
CASES = [pytest.param(text, said, command, id=f"{name}-{command}")
         for name, text, said, commands in HOSTILE for command in commands]


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "signoff.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "said", "command"), CASES)
def test_a_hostile_config_is_one_line_and_exit_1_through_the_real_command(
        dsn: str, tmp_path: Path, text: str | bytes, said: str, command: str) -> None:
    path = write(tmp_path, text)
    argv = (["-m", "taskqueue", "worker", "--capability", "x"] if command == "worker"
            else ["-m", "bot"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SIGNOFF_"))}
    done = subprocess.run([sys.executable, *argv, "--config", str(path)], cwd=ROOT,
                          env=env | {"DATABASE_URL": dsn}, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 1, (done.stdout, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"signoff: {path}"), done.stderr[-2000:]
    assert said in lines[0] and len(lines[0]) < 400
    assert count(dsn, "SELECT count(*) FROM capabilities") == 0


@pytest.mark.parametrize(("text", "said"), [(t, s) for _, t, s, c in HOSTILE if "worker" in c])
def test_a_hostile_config_is_a_config_error_for_the_loader_too(
        tmp_path: Path, text: str | bytes, said: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        load_config(write(tmp_path, text), env={})
    assert said in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text", [t for _, t, _, _ in HOSTILE[:6]])
def test_a_workloads_own_read_of_the_file_is_bounded_the_same_way(
        tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="nested deeper than 32 levels"):
        workload_section("vm_ops", write(tmp_path, text), env={})


def test_nesting_up_to_the_limit_and_brackets_in_strings_and_comments_still_load(
        tmp_path: Path) -> None:
    many = "[" * 100
    inner = MAX_CONFIG_DEPTH - 2  # [workloads.mine] holds two levels of the limit
    text = (f"[workloads.mine]\narray = {'[' * inner}{']' * inner}\n"
            f"basic = \"{many}\\\"{many}\"\nliteral = '{many}'  # {many}\n"
            f"multi = \"\"\"\n{many}\n\"{many}\"\"\"\"\nmulti_literal = '''{many}\n'''\n"
            f"{'.'.join(['d'] * inner)} = 1\n")
    mine = load_config(write(tmp_path, text), env={}).workloads["mine"]
    assert mine["basic"] == f"{many}\"{many}" and mine["literal"] == many
    assert mine["multi"] == f"{many}\n\"{many}\"" and mine["multi_literal"] == f"{many}\n"
    with pytest.raises(ConfigError, match=r"line 2: workloads\.mine\.array\[0\]"):
        deeper = text.replace("array = [", "array = [[").replace("]]\n", "]]]\n", 1)
        load_config(write(tmp_path, deeper), env={})


@pytest.mark.parametrize(("text", "line"), [
    ("a = 1\nb = [[[\n", None),
    ("a = '[[['\nb = " + "[" * 33, 2),
    ('a = """\n' + "[" * 40 + '\n"""\nb = 2\nc = ' + "{" * 33, 5),
    ("# " + "[" * 40 + "\nb = " + "[" * 33, 2),
    ('a = "\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["\nb = 1\n', None),
    ('a = "unterminated [[[\n' + "[" * 33, 2),
])
def test_the_nesting_scan_skips_strings_and_comments(text: str, line: int | None) -> None:
    assert nesting_line(text) == line
