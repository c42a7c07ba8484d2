"""ConfigSection: the field checks every workload's settings share, each error naming the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskqueue import ConfigError, ConfigSection, workload_section


class SectionError(ConfigError):
    """A test section's setting is invalid."""


CHECK = ConfigSection("workloads.demo", error=SectionError)


def test_good_values_come_back_checked() -> None:
    raw = {"name": " x ", "n": 3, "t": 0.5, "on": False, "pct": 100}
    assert CHECK.text(raw, "name") == "x"
    assert CHECK.text(raw, "absent", "fallback") == "fallback"
    assert CHECK.text({"dc": ""}, "dc", "", empty=True) == ""
    assert CHECK.positive(raw, "n", 1, whole=True) == 3 and CHECK.positive(raw, "t", 1) == 0.5
    assert CHECK.flag(raw, "on", True) is False and CHECK.whole(raw, "pct", 0, 0, 100) == 100
    assert CHECK.seconds({"t": 2_592_000}, "t", 1) == 2_592_000
    assert CHECK.positive({"n": 10**12}, "n", 1, whole=True) == 10**12
    assert CHECK.number({}, "x", 0.2, 0, 2) == 0.2 and CHECK.number({"x": 2}, "x", 0, 0, 2) == 2
    CHECK.known(raw, {"name", "n", "t", "on", "pct"})


@pytest.mark.parametrize(("call", "message"), [
    (lambda: CHECK.text({}, "uri", required=True), "workloads.demo.uri: required"),
    (lambda: CHECK.text({}, "token", prefix="boards[0]."),
     "workloads.demo.boards[0].token: must be a non-empty string, not None"),
    (lambda: CHECK.text({"a": "x\ny"}, "a", one_line=True),
     "workloads.demo.a: must be a non-empty one-line string"),
    (lambda: CHECK.positive({"n": 0}, "n", 1, whole=True),
     "workloads.demo.n: must be a whole number above 0, not 0"),
    (lambda: CHECK.positive({"n": True}, "n", 1), "must be a number above 0, not True"),
    (lambda: CHECK.whole({"m": 7}, "m", 1, 0, 5),
     "workloads.demo.m: must be a whole number from 0 to 5, not 7"),
    (lambda: CHECK.flag({"f": "yes"}, "f", True), "workloads.demo.f: must be true or false"),
    (lambda: CHECK.positive({"t": float("nan")}, "t", 1),
     "workloads.demo.t: must be a number above 0 and at most 1,000,000,000,000, not nan"),
    (lambda: CHECK.positive({"t": float("inf")}, "t", 1), "at most 1,000,000,000,000, not inf"),
    (lambda: CHECK.positive({"n": 10**13}, "n", 1, whole=True), "whole number above 0 and at"),
    (lambda: CHECK.seconds({"t": 2_592_001}, "t", 1), "at most 2,592,000, not 2592001"),
    (lambda: CHECK.number({"x": 3}, "x", 0.2, 0, 2), "workloads.demo.x: must be a number from 0 "
                                                     "to 2, not 3"),
    (lambda: CHECK.number({"x": "1"}, "x", 0.2, 0, 2), "must be a number from 0 to 2, not '1'"),
    (lambda: CHECK.known({"b": 1}, {"a"}), "workloads.demo.b: unknown key; expected one of a"),
])
def test_a_bad_value_is_one_error_naming_the_section_and_key(call: Any, message: str) -> None:
    with pytest.raises(SectionError) as raised:
        call()
    assert message in str(raised.value)


SECRETS = ConfigSection("workloads.demo", error=SectionError,
                        secrets={"password": "set DEMO_PASSWORD", "api.token": "see the README"})


@pytest.mark.parametrize(("table", "prefix", "message"), [
    ({"password": "x", "colour": 1}, "",
     "workloads.demo.password: secrets never go in the file; set DEMO_PASSWORD"),
    ({"token": "x"}, "api.", "workloads.demo.api.token: secrets never go in the file; see the "
                             "README"),
    ({"url": "x"}, "api.", "workloads.demo.api.url: unknown key; expected one of token"),
])
def test_a_secret_in_the_file_is_refused_before_any_unknown_key(
        table: dict[str, Any], prefix: str, message: str) -> None:
    with pytest.raises(SectionError) as raised:
        SECRETS.known(table, {"token"} if prefix else {"colour"}, prefix=prefix)
    assert str(raised.value) == message
    SECRETS.known({"colour": 1, "token": 2}, {"colour", "token"})  # no secret at this level


def test_a_secrets_error_names_its_line(tmp_path: Path) -> None:
    file = tmp_path / "signoff.toml"
    file.write_text('[workloads.demo]\ncolour = 1\n\n[workloads.demo.api]\ntoken = "x"\n')
    raw, _ = workload_section("demo", file, env={})
    with pytest.raises(SectionError) as raised:
        SECRETS.known(raw["api"], {"url"}, prefix="api.")
    assert str(raised.value) == ("workloads.demo.api.token: secrets never go in the file; "
                                 f"see the README ({file}, line 5)")
