"""Every setting `signoff caps set` takes is accepted in the config file under its key and
written to the database by `apply_capabilities` (the worker's and service's start-up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue import ConfigError, TaskQueue, apply_capabilities, load_config
from taskqueue.cli.main import build_parser
from taskqueue.cli.manners import subcommands
from taskqueue.config.model import CAP_SETTINGS, CapSetting

# A value for each setting, as the file writes it, and what the database then holds.
VALUES = {"max_running": (3, 3), "max_parked": (4, 4), "daily_new": (5, 5),
          "timezone": ('"Asia/Tokyo"', "Asia/Tokyo"), "lease_seconds": (77, 77),
          "approval_ttl_hours": (2, 7200), "max_attempts": (9, 9),
          "retry_base_seconds": (11, 11), "required_approvals": (2, 2),
          "signed_approvals": ("true", True)}


def _caps_set_options() -> set[str]:
    [parser] = [p for w, p, _ in subcommands(build_parser()) if w == ("caps", "set")]
    return {o[2:].replace("-", "_") for a in parser._actions for o in a.option_strings
            if o.startswith("--") and o not in ("--help", "--json")}


def test_caps_set_options_are_the_shared_list() -> None:
    assert _caps_set_options() == {s.option for s in CAP_SETTINGS}
    assert set(VALUES) == {s.key for s in CAP_SETTINGS}


@pytest.mark.parametrize("setting", CAP_SETTINGS, ids=lambda s: s.option)
async def test_each_caps_set_setting_loads_from_the_file_and_is_applied(
        setting: CapSetting, tmp_path: Path, queue: TaskQueue) -> None:
    s = setting
    written, stored = VALUES[s.key]
    path = tmp_path / "signoff.toml"
    path.write_text("[capabilities.mail]\nmode = \"external\"\n"
                    f"{s.key} = {written}\n")
    config = load_config(path, env={})
    [cap] = await apply_capabilities(queue, config)
    assert getattr(cap, s.column) == stored
    [listed] = await queue.capability_list()
    assert getattr(listed, s.column) == stored


def test_a_bad_retry_base_is_refused_with_its_key(tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text('[capabilities.mail]\nmode = "external"\nretry_base_seconds = "x"\n')
    with pytest.raises(ConfigError, match=r"retry_base_seconds"):
        load_config(path, env={})


def test_a_capability_timezone_falls_back_to_the_files(tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text('timezone = "Europe/Berlin"\n[capabilities.mail]\nmode = "external"\n')
    assert load_config(path, env={}).capabilities["mail"].settings("Europe/Berlin")[
        "day_timezone"] == "Europe/Berlin"
