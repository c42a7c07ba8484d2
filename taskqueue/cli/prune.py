"""`signoff prune [--older-than DAYS] [--capability CAP] [--json]`: run retention once, now.

The same run the service makes daily (taskqueue/maintenance/pruner.py), with the ages and
the VACUUM threshold of the config file's `[retention]` table and capabilities'
`retention_days`; `--older-than` replaces every age for this run (the audit trail's too,
when it is shorter).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from taskqueue.cli.app_dir import add_app_dir, use_app_dir
from taskqueue.cli.arguments import positive_days
from taskqueue.cli.commands import open_queue
from taskqueue.cli.output import print_json, safe
from taskqueue.config.settings import load_config
from taskqueue.maintenance.pruner import Pruner, PrunerConfig, PruneReport


def _config(args: Any) -> PrunerConfig:
    config = load_config(args.config, imports=False).retention
    if args.older_than is None:
        return config
    return dataclasses.replace(config, days=args.older_than, capabilities={},
                               audit_days=min(config.audit_days, args.older_than))


async def prune_cmd(args: Any) -> int:
    use_app_dir(args.app_dir)
    config = _config(args)
    async with open_queue() as queue:
        report = await Pruner(queue, config, only=args.capability).run_once()
    if args.json:
        print_json(report.to_json())
    else:
        parts = ", ".join(f"{safe(k)}: {v}" for k, v in report.by_capability.items())
        print(f"pruned {report.tasks} tasks ({parts}) and {report.attachments} attachments"
              + _vacuumed(report))
    return 0


def _vacuumed(report: PruneReport) -> str:
    if report.vacuum_ms is None:
        return ""
    return f"; vacuumed {len(report.vacuumed)} tables in {report.vacuum_ms:.0f} ms"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("prune", help="delete old finished tasks now (retention)")
    p.add_argument("--older-than", type=positive_days, metavar="DAYS",
                   help="finished more than DAYS days ago (a number of days, fractions "
                        "allowed: 0.5 is twelve hours; default: the config's ages)")
    p.add_argument("--capability", metavar="CAP", help="only this capability")
    p.add_argument("--config", metavar="FILE", help="config file (default $SIGNOFF_CONFIG)")
    p.add_argument("--json", action="store_true")
    add_app_dir(p)
    p.set_defaults(func=prune_cmd)
