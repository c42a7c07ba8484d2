"""Which configuration file a process reads: `--config`, else SIGNOFF_CONFIG, else none.

Kept apart from the reading (settings.py) so that a command can learn that no file is
named without loading the config's checker and model."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CONFIG_ENV = "SIGNOFF_CONFIG"


def config_path(path: str | os.PathLike[str] | None = None,
                env: Mapping[str, str] | None = None) -> Path | None:
    """`--config`, else SIGNOFF_CONFIG, else None (built-in defaults)."""
    env = os.environ if env is None else env
    chosen = path if path is not None else env.get(CONFIG_ENV) or None
    return Path(chosen) if chosen is not None else None
