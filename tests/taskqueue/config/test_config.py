"""The config file: defaults, the example, environment overrides, and errors with key and line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskqueue import ConfigError, TaskQueue, apply_capabilities, load_config
from taskqueue.config.checker import key_lines
from taskqueue.config.model import RANGES

ROOT = Path(__file__).resolve().parents[3]
H = "tests.taskqueue.handlers_for_tests"

GOOD = f"""\
timezone = "Europe/Berlin"

[reaper]
interval_minutes = 2

[capabilities.mail]
handler = "{H}:quick"
mode = "pool"
concurrency = 3
max_running = 2
lease_seconds = 60
approval_ttl_hours = 1.5

[capabilities.cv]
handler = "{H}:quick"
mode = "tick"
tick_minutes = 5

[[capabilities.cv.producers]]
name = "nightly"
function = "{H}:nightly"
cron = "30 2 * * *"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(text)
    return path


def test_no_file_means_defaults() -> None:
    config = load_config(None, env={})
    assert config.path is None and config.capabilities == {}
    assert config.reaper_interval_minutes == 5 and config.digest_times == ("09:00", "18:00")
    assert config.sections == {}


def test_path_comes_from_signoff_config(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    config = load_config(None, env={"SIGNOFF_CONFIG": str(path)})
    assert config.path == path and config.timezone == "Europe/Berlin"
    assert config.reaper_interval_minutes == 2
    mail, cv = config.capabilities["mail"], config.capabilities["cv"]
    assert (mail.mode, mail.concurrency, mail.max_running) == ("pool", 3, 2)
    assert cv.mode == "tick" and cv.producers[0].cron == "30 2 * * *"
    assert mail.settings(config.timezone) == {
        "day_timezone": "Europe/Berlin", "max_running": 2, "lease_seconds": 60,
        "approval_ttl_seconds": 5400}


def test_the_documented_example_is_valid_and_its_handlers_import() -> None:
    config = load_config(ROOT / "signoff.example.toml", env={}, imports=True)
    job = config.capabilities["job_applications"]
    assert job.mode == "tick" and job.producers[0].name == "nightly-scrape"
    assert (job.daily_new, job.max_running, job.max_parked) == (15, 2, 8)
    assert config.sections["telegram"]["allowed_user_ids"] == [123456789]
    assert config.workloads["job_applications"]["top"] == 15


def test_workload_tables_pass_through_and_a_non_table_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "[workloads.mine]\nanything = [1, 2]\n")
    assert load_config(path, env={}).workloads == {"mine": {"anything": [1, 2]}}
    path = write(tmp_path, "timezone = 'UTC'\nworkloads = 3\n")
    with pytest.raises(ConfigError, match=r"line 2.*workloads"):
        load_config(path, env={})


def test_tables_the_core_does_not_read_are_kept_for_their_owners(tmp_path: Path) -> None:
    path = write(tmp_path, "[telegram]\nchat_id = 1\n[web_inbox]\nport = 8080\n")
    config = load_config(path, env={})
    assert config.sections == {"telegram": {"chat_id": 1}, "web_inbox": {"port": 8080}}
    assert config.checker().line_of(("web_inbox", "port")) == 4
    # An unknown key that is not a table is still a typo the core names.
    with pytest.raises(ConfigError, match=r"line 1.*timezon"):
        load_config(write(tmp_path, "timezon = 'UTC'\n"), env={})


async def test_capability_settings_are_applied_to_the_database(tmp_path: Path,
                                                               queue: TaskQueue) -> None:
    await apply_capabilities(queue, load_config(write(tmp_path, GOOD), env={}))
    mail = await queue.capability_get("mail")
    assert (mail.max_running, mail.lease_seconds, mail.approval_ttl_seconds) == (2, 60, 5400)
    assert mail.day_timezone == "Europe/Berlin"


@pytest.mark.parametrize(("text", "key", "line"), [
    ("timezone = 'UTC'\n[reaper]\ninterval = 5\n", "reaper.interval", 3),
    ("[reaper]\ninterval_minutes = 'often'\n", "reaper.interval_minutes", 2),
    ("timezone = 'Mars/Olympus'\n", "timezone", 1),
    (f"[capabilities.a]\nhandler = '{H}:quick'\nmode = 'swarm'\n", "capabilities.a.mode", 3),
    ("[capabilities.a]\nmode = 'pool'\n", "capabilities.a", 1),
    (f"[capabilities.a]\nhandler = '{H}:quick'\nmax_running = -1\n",
     "capabilities.a.max_running", 3),
    (f"[capabilities.a]\nhandler = '{H}:nope'\n", "capabilities.a.handler", 2),
    (f"[capabilities.a]\nhandler = '{H}:quick'\n\n[[capabilities.a.producers]]\nname = 'x'\n"
     f"function = '{H}:nightly'\ncron = '0 2 * *'\n", "capabilities.a.producers[0].cron", 7),
    (f"[capabilities.a]\nhandler = '{H}:quick'\n[[capabilities.a.producers]]\nname = 'x'\n"
     f"function = '{H}:nightly'\ncron = '0 2 * * *'\n[[capabilities.a.producers]]\n"
     f"name = 'y'\nfunction = '{H}:nightly'\ncron = '0 61 * * *'\n",
     "capabilities.a.producers[1].cron", 10),
    ("[nudges]\ndigest_times = ['9am']\n", "nudges.digest_times", 2),
])
def test_a_bad_config_names_the_key_and_line(tmp_path: Path, text: str, key: str,
                                            line: int) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert f"{path}, line {line}: {key}:" in str(err.value)


def test_retention_vacuum_after_is_read_and_zero_turns_the_vacuum_off(tmp_path: Path) -> None:
    assert load_config(None, env={}).retention.vacuum_after == 1000
    for text, read in (("0", 0), ("250", 250), ("1_000_000", 1_000_000)):
        path = write(tmp_path, f"[retention]\ndays = 7\nvacuum_after = {text}\n")
        retention = load_config(path, env={}).retention
        assert (retention.days, retention.vacuum_after) == (7, read)


@pytest.mark.parametrize(("value", "said"), [
    ("'often'", "must be a whole number, not 'often'"),
    ("1.5", "must be a whole number, not 1.5"),
    ("-1", "must be at least 0 (and at most 1000000000), not -1"),
    ("true", "must be a whole number, not True"),
])
def test_a_bad_retention_vacuum_after_is_one_line_naming_it(tmp_path: Path, value: str,
                                                           said: str) -> None:
    path = write(tmp_path, f"[retention]\nvacuum_after = {value}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert str(err.value) == f"{path}, line 2: retention.vacuum_after: {said}"


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "timezone = 'UTC'\n[reaper\n")
    with pytest.raises(ConfigError, match=r"invalid TOML: .*line 2"):
        load_config(path, env={})


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.toml", env={})


def test_key_lines_follow_tables_arrays_and_dotted_keys() -> None:
    lines = key_lines("a = 1\n[t]\nb.c = 2\n[[t.p]]\nx = 1\n[[t.p]]\n'y' = 2\n")
    assert lines[("a",)] == 1 and lines[("t", "b", "c")] == 3
    assert lines[("t", "p", 0, "x")] == 5 and lines[("t", "p", 1, "y")] == 7


def test_publish_path_exposes_the_config_file_to_handlers(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from taskqueue.config.settings import publish_path

    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    publish_path(load_config(None, env={}))
    assert "SIGNOFF_CONFIG" not in os.environ
    path = write(tmp_path, "timezone = 'UTC'\n")
    publish_path(load_config(path, env={}))
    assert os.environ["SIGNOFF_CONFIG"] == str(path.resolve())


def _one_key(section: str, key: str, value: object) -> str:
    if section == "capabilities":
        return f"[capabilities.a]\nhandler = '{H}:quick'\n{key} = {value}\n"
    return f"[{section}]\n{key} = {value}\n"


def _toml(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


@pytest.mark.parametrize(("section", "key"), sorted(RANGES))
def test_each_numeric_key_loads_at_both_ends_of_its_range_and_not_past_them(
        tmp_path: Path, section: str, key: str) -> None:
    low, high = RANGES[(section, key)]
    whole = isinstance(low, int) and isinstance(high, int) and key not in _FRACTIONAL
    for value in (low, high):
        load_config(write(tmp_path, _one_key(section, key, _toml(value))), env={})
    line = 3 if section == "capabilities" else 2
    shown = f"{section}.a.{key}" if section == "capabilities" else f"{section}.{key}"
    past = ([low - 1, high + 1] if whole else [low / 2 if low > 0 else -0.5, high * 2])
    for value in [*past, "nan", "inf", "-inf"]:
        text = _one_key(section, key, value if isinstance(value, str) else _toml(value))
        with pytest.raises(ConfigError) as err:
            load_config(write(tmp_path, text), env={})
        assert str(err.value).startswith(f"{tmp_path / 'signoff.toml'}, line {line}: {shown}: ")


# Keys read as numbers (a float is fine) whose range ends happen to be whole.
_FRACTIONAL = {"interval_minutes", "orphan_after_seconds", "incident_age_hours",
               "nudge_age_hours", "check_minutes", "poll_interval_seconds", "grace_seconds",
               "days", "audit_days", "tick_minutes", "timeout_seconds", "approval_ttl_hours",
               "retention_days"}


def test_the_ranges_are_documented() -> None:
    doc = (ROOT / "docs" / "semantics.md").read_text()
    for (section, key), (low, high) in RANGES.items():
        table = "capabilities.NAME" if section == "capabilities" else section
        row = f"| `[{table}] {key}` | {low:,} | {high:,} |".replace(",", " ")
        assert row in doc, row
