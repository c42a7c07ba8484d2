"""Cron schedules (runtime/cron.py): the five fields and the nicknames, their next fire
times, the config's check, and `signoff produce --dry-run`, which writes nothing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from taskqueue import ConfigError, load_config
from taskqueue.runtime.cron import NICKNAMES, cron_next
from tests.taskqueue.cli_helpers import ERROR, OK, Cli, check_failed, count

H = "tests.taskqueue.handlers_for_tests"
PARIS = ZoneInfo("Europe/Paris")
# A Wednesday, 10:30 in Paris.
AFTER = datetime(2026, 12, 2, 10, 30, tzinfo=PARIS)


@pytest.mark.parametrize("expr, first, second", [
    ("@hourly", "2026-12-02T11:00", "2026-12-02T12:00"),
    ("@daily", "2026-12-03T00:00", "2026-12-04T00:00"),
    ("@midnight", "2026-12-03T00:00", "2026-12-04T00:00"),
    ("@weekly", "2026-12-06T00:00", "2026-12-13T00:00"),  # Sundays, as cron(8)
    ("@monthly", "2027-01-01T00:00", "2027-02-01T00:00"),
    ("@yearly", "2027-01-01T00:00", "2028-01-01T00:00"),
    ("@annually", "2027-01-01T00:00", "2028-01-01T00:00"),
    ("0 8 * * *", "2026-12-03T08:00", "2026-12-04T08:00"),
    ("*/20 * * * *", "2026-12-02T10:40", "2026-12-02T11:00"),
])
def test_next_fire_times_in_the_timezone(expr: str, first: str, second: str) -> None:
    times = cron_next(expr, "Europe/Paris", 3, AFTER)
    assert len(times) == 3 and all(t.utcoffset() == AFTER.utcoffset() for t in times)
    assert [t.strftime("%Y-%m-%dT%H:%M") for t in times[:2]] == [first, second]
    assert times == sorted(set(times))


def _days(expr: str, count: int = 14) -> list[str]:
    """The weekday and day of month of the next `count` runs, as `Mon 07`."""
    return [t.strftime("%a %d") for t in cron_next(expr, "UTC", count, AFTER)]


@pytest.mark.parametrize("expr, days", [
    ("0 8 * * 1", {"Mon"}), ("0 8 * * mon", {"Mon"}),
    ("0 8 * * 0", {"Sun"}), ("0 8 * * 7", {"Sun"}), ("* * * * 7", {"Sun"}),
    ("0 8 * * sun", {"Sun"}), ("0 8 * * 6", {"Sat"}),
    ("0 8 * * 1-5", {"Mon", "Tue", "Wed", "Thu", "Fri"}),
    ("0 8 * * mon-fri", {"Mon", "Tue", "Wed", "Thu", "Fri"}),
    ("0 8 * * 0,6", {"Sat", "Sun"}), ("0 8 * * sat,sun", {"Sat", "Sun"}),
    ("0 8 * * sat-sun", {"Sat", "Sun"}), ("0 8 * * 5-7", {"Fri", "Sat", "Sun"}),
    ("0 8 * * */2", {"Sun", "Tue", "Thu", "Sat"}), ("0 8 * * 1-5/2", {"Mon", "Wed", "Fri"}),
    ("0 8 * * 1/3", {"Mon", "Thu", "Sun"}), ("0 8 * * 0-7", {"Mon", "Tue", "Wed", "Thu",
                                                               "Fri", "Sat", "Sun"}),
])
def test_weekdays_count_from_sunday_as_cron(expr: str, days: set[str]) -> None:
    assert {d.split()[0] for d in _days(expr)} == days


def test_a_day_of_month_and_a_weekday_fire_on_either() -> None:
    # cron(8): both restricted, so the 13th (a Sunday in December 2026) and every Friday.
    assert _days("0 0 13 * 5", 6) == ["Fri 04", "Fri 11", "Sun 13", "Fri 18", "Fri 25",
                                      "Fri 01"]
    assert _days("0 0 1,15 * mon", 4) == ["Mon 07", "Mon 14", "Tue 15", "Mon 21"]


@pytest.mark.parametrize("expr, days", [
    ("0 0 13 * *", ["Sun 13", "Wed 13"]),          # the weekday unrestricted: the 13th
    ("0 0 * * 5", ["Fri 04", "Fri 11"]),           # the day unrestricted: Fridays
    ("0 0 */2 * 1", ["Mon 07", "Mon 21"]),         # a `*` step counts as unrestricted: both
])
def test_an_unrestricted_day_field_leaves_the_other_alone(expr: str, days: list[str]) -> None:
    assert _days(expr, 2) == days


def test_every_nickname_is_tested() -> None:
    assert set(NICKNAMES) == {"@hourly", "@daily", "@midnight", "@weekly", "@monthly",
                              "@yearly", "@annually"}


def _config(tmp_path: Path, cron: str, tz: str = "UTC") -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(f'timezone = "{tz}"\n[capabilities.cv]\nhandler = "{H}:quick"\n'
                    f'[[capabilities.cv.producers]]\nname = "nightly"\n'
                    f'function = "{H}:nightly"\ncron = "{cron}"\n')
    return path


@pytest.mark.parametrize("cron", ["@daily", "@HOURLY", "15 3 * * mon-fri", "0 8 * * 7",
                                  "0 0 13 * 5", "0 8 * * 0,6", "0 8 * * */2"])
def test_the_config_accepts_nicknames(tmp_path: Path, cron: str) -> None:
    assert load_config(_config(tmp_path, cron), env={}).capabilities["cv"].producers[0].cron


@pytest.mark.parametrize("cron, says", [("@fortnightly", "unknown nickname"),
                                        ("0 8 * *", "5 fields"),
                                        ("0 25 * * *", "invalid cron"),
                                        ("0 8 * * 8", "weekday '8' is not 0-7"),
                                        ("0 8 * * fri-mon", "runs backwards"),
                                        ("0 8 * * 1,,2", "weekday term ''"),
                                        ("0 8 * * */0", "step in '[*]/0' is 0"),
                                        ("0 8 * * ２", "weekday '２'")])
def test_the_config_refuses_a_bad_schedule_with_its_line(tmp_path: Path, cron: str,
                                                         says: str) -> None:
    with pytest.raises(ConfigError, match=says) as err:
        load_config(_config(tmp_path, cron), env={})
    assert "line 7: capabilities.cv.producers[0].cron" in str(err.value)
    assert "\n" not in str(err.value)


def test_dry_run_prints_the_next_three_and_writes_nothing(dsn: str, tmp_path: Path) -> None:
    cli = Cli(dsn)
    config = str(_config(tmp_path, "@daily", "Asia/Tokyo"))
    done = cli("produce", "cv", "nightly", "--dry-run", "--json", "--config", config)
    assert done.returncode == OK, done.stderr
    [row] = json.loads(done.stdout)
    assert (row["name"], row["capability"], row["cron"], row["timezone"]) == (
        "nightly", "cv", "@daily", "Asia/Tokyo")
    times = [datetime.fromisoformat(t) for t in row["next"]]
    assert len(times) == 3 and all(t.strftime("%H:%M%z") == "00:00+0900" for t in times)
    assert times[0] > datetime.now(ZoneInfo("Asia/Tokyo"))
    text = cli("produce", "cv", "--dry-run", "--config", config)
    assert text.returncode == OK and text.stdout.count("\n") == 1
    assert "producer nightly (cv) cron @daily (Asia/Tokyo): next " in text.stdout
    for table in ("tasks", "producer_runs", "task_events"):
        assert count(dsn, f"SELECT count(*) FROM {table}") == 0, table


def test_dry_run_shows_a_day_and_a_weekday_firing_on_either(dsn: str,
                                                             tmp_path: Path) -> None:
    config = str(_config(tmp_path, "0 0 13 * 5"))
    done = Cli(dsn)("produce", "cv", "nightly", "--dry-run", "--json", "--config", config)
    assert done.returncode == OK, done.stderr
    [row] = json.loads(done.stdout)
    times = [datetime.fromisoformat(t) for t in row["next"]]
    assert all(t.day == 13 or t.strftime("%a") == "Fri" for t in times)
    assert times[2] - times[0] <= timedelta(days=14)  # every Friday, not Friday the 13th
    assert times == cron_next("0 0 13 * 5", "UTC", 3, times[0] - timedelta(seconds=1))


def test_dry_run_refuses_a_period(dsn: str, tmp_path: Path) -> None:
    done = Cli(dsn)("produce", "cv", "--dry-run", "--period", "2026-12-01",
                    "--config", str(_config(tmp_path, "@daily")))
    assert "--dry-run" in check_failed(done, ERROR)
