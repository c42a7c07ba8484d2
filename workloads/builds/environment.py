"""The environment a build or an upload runs with: this process's, without the secrets."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["WITHHELD_ENV", "clean_env"]

# Never handed to a build: the build runs the repository's code.
WITHHELD_ENV = ("SIGNOFF_ASC_KEY_ID", "SIGNOFF_ASC_ISSUER_ID", "SIGNOFF_ASC_KEY_PATH",
                "SIGNOFF_ROBLOX_API_KEY", "DATABASE_URL", "TELEGRAM_BOT_TOKEN",
                "TELEGRAM_WEBHOOK_SECRET", "SIGNOFF_MODEL_API_KEY")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without secrets, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in WITHHELD_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return {**env, **(extra or {})}
