"""The `[workloads.ios_build]` / `[workloads.roblox_build]` sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from workloads.builds.settings import SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[3]


def test_the_example_config_loads_for_both_capabilities() -> None:
    example = ROOT / "signoff.example.toml"
    ios = load_settings("ios_build", example, env={})
    assert ios.command[0] in ("fastlane", "xcodebuild") and ios.artifacts
    assert "{artifact}" in " ".join(ios.upload_command)
    roblox = load_settings("roblox_build", example, env={})
    assert roblox.command[:2] == ("rojo", "build")
    assert roblox.base_url == "https://apis.roblox.com"


@pytest.mark.parametrize(("body", "message"), [
    ('command = "rojo build -o out.rbxl"', "array of strings (never a shell string)"),
    ('command = ["rojo", "{home}"]', "unknown placeholder {home}"),
    ('artifacts = ["../*.rbxl"]', "relative to the output folder"),
    ('api_key = "k"', "secrets never go in the file"),
    ('colour = "red"', "unknown key"),
    ('base_url = "ftp://x"', "must start with https://"),
    ("timeout_seconds = 0", "above 0"),
    ("publish_approvals = 11", "publish_approvals: must be 1 to 10"),
    ("publish_approvals = 0", "above 0"),
])
def test_a_bad_setting_names_its_key(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[workloads.roblox_build]\n{body}\n")
    with pytest.raises(SettingsError, match=r"workloads\.roblox_build") as info:
        load_settings("roblox_build", path, env={})
    assert message in str(info.value)


def test_defaults_live_under_the_data_folder(tmp_path: Path) -> None:
    s = load_settings("roblox_build", None, env={"SIGNOFF_DATA_DIR": str(tmp_path)})
    assert s.store == tmp_path.resolve() / "builds" / "artifacts"
    assert s.work_dir == tmp_path.resolve() / "builds" / "work"


def test_publish_approvals_defaults_to_one_and_takes_two(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[workloads.ios_build]\npublish_approvals = 2\n")
    assert load_settings("ios_build", path, env={}).publish_approvals == 2
    assert load_settings("roblox_build", path, env={}).publish_approvals == 1
