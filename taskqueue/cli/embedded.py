"""`signoff embedded stop|status`: the private PostgreSQL the CLI and the service share
(under SIGNOFF_DATA_DIR) when DATABASE_URL is not set."""

from __future__ import annotations

import argparse
import os
from typing import Any

from taskqueue.cli.output import print_json, safe
from taskqueue.embedded import server as embedded


async def stop_cmd(args: Any) -> int:
    folder = embedded.data_dir()
    stopped = embedded.stop(folder)
    if args.json:
        print_json({"data_dir": str(folder), "stopped": stopped})
    else:
        print(f"embedded PostgreSQL in {safe(folder)}: "
              + ("stopped" if stopped else "was not running"))
    return 0


async def status_cmd(args: Any) -> int:
    folder = embedded.data_dir()
    running = embedded.running(folder)
    doc = {"data_dir": str(folder), "running": running,
           "database_url_set": bool(os.environ.get("DATABASE_URL"))}
    if args.json:
        print_json(doc)
    else:
        print(f"embedded PostgreSQL in {safe(folder)}: {'running' if running else 'stopped'}"
              + ("; DATABASE_URL is set, so commands use that database instead"
                 if doc["database_url_set"] else ""))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("embedded", help="the embedded PostgreSQL: stop it, or see its state")
    verbs = p.add_subparsers(dest="embedded_command", required=True, metavar="VERB")
    for name, func, help_ in (("stop", stop_cmd, "stop the embedded server"),
                              ("status", status_cmd, "whether it runs, and where")):
        q = verbs.add_parser(name, help=help_)
        q.add_argument("--json", action="store_true")
        q.set_defaults(func=func)
