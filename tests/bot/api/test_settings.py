"""The `[api]` table: the example's values are the defaults; a bad one stops start-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.api.settings import ApiSettings, from_config
from taskqueue import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[3]


def test_the_example_config_holds_the_defaults() -> None:
    config = load_config(ROOT / "signoff.example.toml", env={}, imports=False)
    assert from_config(config) == ApiSettings()


@pytest.mark.parametrize(("text", "message"), [
    ("[api]\nrate_per_minute = 0\n", "rate_per_minute"),
    ("[api]\nburst = 'many'\n", "burst"),
    ("[api]\nenabled = 'yes'\n", "enabled"),
    ("[api]\nrate = 5\n", "rate"),
])
def test_bad_values_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        from_config(load_config(path, env={}, imports=False))
