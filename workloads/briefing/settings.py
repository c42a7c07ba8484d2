"""The workload's settings: `[workloads.briefing]` of the service's config file.

The file is the one the service reads (`SIGNOFF_CONFIG`, or the `path` given); without a
file or a section the defaults apply. A bad setting is a `SettingsError` naming the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskqueue import ConfigError, ConfigSection, workload_section

__all__ = ["CONFIG_ENV", "SECTION", "BriefingSettings", "SettingsError", "load_settings"]

SECTION = "workloads.briefing"
CONFIG_ENV = "SIGNOFF_CONFIG"
DEFAULT_NAME_FIELDS = ("title", "name", "vm", "repo")
_KEYS = {"max_items", "name_fields", "name_chars", "error_chars", "max_chars"}
# Telegram shows at most 4,096 characters in a message; a little room for the channel.
TELEGRAM_LIMIT = 4096


class SettingsError(ConfigError):
    """A briefing setting is invalid."""


# The section's field checks (the core's, shared by every workload).
_CHECK = ConfigSection(SECTION, error=SettingsError)
_fail = _CHECK.fail


@dataclass(frozen=True)
class BriefingSettings:
    """How much the briefing shows: items per list, which payload fields name a task, and
    how long names, errors and the whole HTML body may be."""

    max_items: int = 8
    name_fields: tuple[str, ...] = DEFAULT_NAME_FIELDS
    name_chars: int = 80
    error_chars: int = 200
    max_chars: int = 4000


def load_settings(path: str | os.PathLike[str] | None = None,
                  env: Mapping[str, str] | None = None) -> BriefingSettings:
    """Read the section from the config file (`$SIGNOFF_CONFIG` by default) and check it."""
    env = os.environ if env is None else env
    return build(workload_section("briefing", path, env)[0])




def build(raw: Mapping[str, Any]) -> BriefingSettings:
    """Settings from the section's table; every key optional."""
    _CHECK.known(raw, _KEYS)
    fields = raw.get("name_fields", list(DEFAULT_NAME_FIELDS))
    if (not isinstance(fields, list) or not fields
            or not all(isinstance(f, str) and f.strip() for f in fields) or len(fields) > 20):
        raise _fail("name_fields", f"must be a list of 1-20 payload field names, not {fields!r}")
    return BriefingSettings(
        max_items=_CHECK.whole(raw, "max_items", 8, 0, 50),
        name_fields=tuple(f.strip() for f in fields),
        name_chars=_CHECK.whole(raw, "name_chars", 80, 10, 500),
        error_chars=_CHECK.whole(raw, "error_chars", 200, 20, 2000),
        max_chars=_CHECK.whole(raw, "max_chars", 4000, 500, TELEGRAM_LIMIT),
    )
