"""A handler that fails the way a careless client library does: its log lines and its error
quote the secrets of the process's environment (tests/bot/test_secrets.py checks that none
of them reaches a log line or a task's stored error)."""

from __future__ import annotations

import os

from taskqueue import Done, Task, TaskContext

LEAKED = ("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "SIGNOFF_VCENTER_PASSWORD",
          "SIGNOFF_ROBLOX_API_KEY", "SIGNOFF_ASC_KEY_ID", "SIGNOFF_ASC_ISSUER_ID",
          "SIGNOFF_GITHUB_TOKEN",
          "SIGNOFF_MODEL_API_KEY", "DATABASE_URL")


async def leaky(task: Task, ctx: TaskContext) -> Done:
    """Log every secret (as an argument and inside the message), then raise with them."""
    values = {name: os.environ.get(name, "") for name in LEAKED}
    ctx.log.info("publishing with %s", values)
    ctx.log.warning("publish url=https://apis.example/v1?key=" + values["SIGNOFF_ROBLOX_API_KEY"])
    raise RuntimeError(f"publish failed: 401 for POST with {values}")
