"""`signoff briefing --preview`: print today's briefing to the terminal without sending it.

Registered through the `signoff.commands` entry point group (pyproject.toml), so the core
CLI never imports this workload.
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import date
from typing import Any

from taskqueue import BadInput, TaskQueue, load_config, migrate, publish_path, resolve_dsn
from workloads.briefing.text import terminal

__all__ = ["add_parser", "preview_cmd"]


def _date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `briefing` on the `signoff` command line."""
    p = sub.add_parser("briefing", help="the daily briefing (--preview prints it, unsent)",
                       epilog="example: signoff briefing --preview --day 2026-01-05")
    p.add_argument("--preview", action="store_true",
                   help="print today's briefing; nothing is sent")
    p.add_argument("--day", type=_date, metavar="YYYY-MM-DD",
                   help="the briefing of this day (its outcomes: the day before)")
    p.add_argument("--html", action="store_true", help="print the Telegram HTML version")
    p.add_argument("--config", metavar="FILE", help="config file (default $SIGNOFF_CONFIG)")
    p.add_argument("--json", action="store_true",
                   help="print {day, subject, text, html, items} as one JSON document")
    p.set_defaults(func=preview_cmd)


async def preview_cmd(args: Any) -> int:
    """Read the briefing and print it; control characters are shown as escapes."""
    if not args.preview:
        raise BadInput("the briefing is sent by its producer (signoff produce briefing); "
                       "use --preview to print it here")
    # Here, not at the top: every `signoff --help` loads this module, with or without the
    # workload's extra (the handler checks it).
    from workloads.briefing.handler import compose

    config = load_config(args.config, imports=False)
    publish_path(config)
    dsn = resolve_dsn()
    if not os.environ.get("DATABASE_URL"):
        await migrate(dsn)  # the embedded server is migrated on first use, as in the core
    async with TaskQueue.connect(dsn, min_size=1, max_size=2) as queue:
        briefing, rendered = await compose(queue, args.day, config=config)
    if args.json:  # json.dumps escapes control characters itself
        print(json.dumps({"day": briefing.day.isoformat(), "subject": rendered.subject,
                          "text": rendered.text, "html": rendered.html,
                          "items": rendered.items}, indent=2))
        return 0
    print(terminal(rendered.html if args.html else rendered.text))
    return 0
