"""The three lines a started service says about what to do next: where the inbox is (or the
one-time link that creates its first account), a command that enqueues a first task, and
where Telegram is set up."""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from taskqueue import Config

log = logging.getLogger("signoff.service")

# The starter workload's handler (`signoff init`, the README's first example) reads a name;
# any other handler gets an empty payload, which the enqueue accepts as written.
STARTER_PAYLOADS = {"mywork.greetings:send_greeting": {"name": "Ada"}}


def say_next_steps(service: Any) -> None:
    """Log the three lines for a started bot.service.Service."""
    inbox_line(service)
    log.info("first task: %s", first_task(service.config))
    log.info("telegram setup: %s", telegram_hint(service.telegram is not None))


def inbox_line(service: Any) -> None:
    """Where the inbox is; with no account yet, its one-time link (printed this once)."""
    from bot.web.firstlink import base_url, say_link_once

    http, web = service.http, service.web
    if http is None:
        log.info('inbox: off (no [http] listener; [http] listen = "auto" serves it, '
                 "docs/web.md)")
        return
    base = base_url(http.host, http.port)
    if web is None:
        log.info("inbox: off ([web] enabled = false); %s serves /healthz and /metrics", base)
        return
    token, web.first_token = web.first_token, None
    if token is not None:
        say_link_once(log, base, token)
    else:
        log.info("inbox: %s/ (sign in with a web account: docs/web.md)", base)


def first_task(config: Config) -> str:
    """A command that enqueues a task of the first configured capability, as written."""
    cli = signoff_command()
    where = _same_database()
    cap = next(iter(config.capabilities.values()), None)
    if cap is None:
        return (f"no capability is configured: `{cli} init` writes a first workload and its "
                "signoff.toml, then start the service with --config signoff.toml "
                "(README, \"A first workload\")")
    args = [cli, "enqueue", cap.name]
    if config.path is not None:
        args += ["--config", str(config.path)]
    payload = STARTER_PAYLOADS.get(cap.handler or "", {})
    args += ["--payload", json.dumps(payload)]
    return " ".join(a if a == cli else shlex.quote(a) for a in args) + where


def _same_database() -> str:
    """What the other shell needs to reach the same database as this service."""
    same = [name for name in ("DATABASE_URL", "SIGNOFF_DATA_DIR") if os.environ.get(name)]
    return f" (in a shell with the same {' and '.join(same)})" if same else ""


def signoff_command() -> str:
    """`signoff` when that is the one beside this Python on the PATH, else its path (relative
    to the current folder when under it, as `.venv/bin/signoff`)."""
    beside = Path(sys.executable).parent / "signoff"
    found = shutil.which("signoff")
    if not beside.exists():
        return "signoff" if found else f"{shlex.quote(sys.executable)} -m taskqueue"
    if found and Path(found).resolve() == beside.resolve():
        return "signoff"
    try:
        return shlex.quote(str(beside.relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(beside))


def telegram_hint(on: bool) -> str:
    """Where Telegram is set up."""
    if on:
        return ("Telegram is on; its settings are the TELEGRAM_* variables and [telegram] "
                "(docs/telegram.md)")
    return ("Telegram is off; set TELEGRAM_BOT_TOKEN, TELEGRAM_CHAT_ID and "
            "TELEGRAM_ALLOWED_USER_IDS to approve from Telegram too (docs/telegram.md)")
