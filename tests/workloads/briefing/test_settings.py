"""`[workloads.briefing]`: defaults, the keys it knows, errors naming the key."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskqueue import Task
from workloads.briefing.gather import task_name
from workloads.briefing.settings import BriefingSettings, SettingsError, build, load_settings

from .seed import write_config


def test_no_file_and_no_section_mean_the_defaults(tmp_path: Path) -> None:
    assert load_settings(env={}) == BriefingSettings()
    bare = tmp_path / "bare.toml"
    bare.write_text('timezone = "UTC"\n')
    assert load_settings(bare) == BriefingSettings()


def test_the_section_is_read_from_the_config_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, section='name_fields = ["branch", "repo"]\nmax_chars = 3000\n')
    settings = load_settings(env={"SIGNOFF_CONFIG": str(path)})
    assert settings.name_fields == ("branch", "repo") and settings.max_chars == 3000
    assert settings.max_items == 8


@pytest.mark.parametrize(("raw", "message"), [
    ({"max_itemz": 3}, r"workloads\.briefing\.max_itemz: unknown key"),
    ({"max_items": -1}, r"workloads\.briefing\.max_items: must be a whole number from 0"),
    ({"max_items": True}, r"max_items: must be a whole number"),
    ({"name_fields": []}, r"workloads\.briefing\.name_fields: must be a list"),
    ({"name_fields": ["ok", 3]}, r"name_fields: must be a list"),
    ({"max_chars": 5000}, r"workloads\.briefing\.max_chars: must be a whole number from 500 "
                          r"to 4096"),
])
def test_a_bad_setting_names_its_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        build(raw)


def _task(payload: dict[str, object]) -> Task:
    now = datetime.now(UTC)
    return Task(1, "cap", "succeeded", 0, payload, {}, None, None, 1, 3,  # type: ignore[arg-type]
                now, None, None, None, None, now, now, now, now)


def test_a_task_is_named_by_the_first_name_field_that_holds_text() -> None:
    settings = build({"name_fields": ["branch", "repo"], "name_chars": 10})
    assert task_name(_task({"repo": "signoff", "branch": "  "}), settings) == "signoff"
    assert task_name(_task({"branch": "feature/very-long-name"}), settings) == "feature/v…"
    assert task_name(_task({"title": "not a name field here"}), settings) == ""
    assert task_name(_task({"title": "line\nbreak\x1b[0m"}), build({})) == "line break\\x1b[0m"
