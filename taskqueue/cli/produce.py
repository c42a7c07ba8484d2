"""`signoff produce CAP [NAME] [--period P]`: run a configured producer once, now.

The same run the scheduler makes, with the same rule: a period runs to completion once,
so producing a period that already ran enqueues nothing and stores no second report.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from taskqueue.cli.app_dir import add_app_dir, use_app_dir
from taskqueue.cli.commands import open_queue
from taskqueue.cli.output import print_json, safe
from taskqueue.config.model import Config, ProducerConfig
from taskqueue.config.settings import load_config, publish_path
from taskqueue.errors import BadInput
from taskqueue.runtime.periods import EXAMPLES, FORMS, canonical_period, is_future, shown

if TYPE_CHECKING:
    from taskqueue.runtime.producer import ProducerReport


def chosen(config: Config, capability: str, name: str | None) -> list[ProducerConfig]:
    """The capability's producers (or the one named); BadInput names what exists."""
    cap = config.capability(capability)
    if cap is None:
        raise BadInput(f"no capability {capability!r} in the config "
                       f"({config.path or 'no config file'})")
    found = [p for p in cap.producers if name in (None, p.name)]
    if not found:
        known = ", ".join(p.name for p in cap.producers) or "none"
        raise BadInput(f"capability {capability!r} has no producer {name!r} (it has: {known})"
                       if name else f"capability {capability!r} has no producers")
    return found


def check_period(period: str | None, producer: ProducerConfig, timezone: str, *,
                 force: bool = False) -> tuple[str | None, bool]:
    """The period's stored spelling (None: the current one) and whether it is in the future.
    BadInput when it names no period of the producer's kind, or a future one without
    `force` (its scheduled run would find it done and skip it)."""
    if period is None:
        return None, False
    try:
        canonical = canonical_period(period, producer.period)
    except BadInput:
        raise BadInput(f"producer {producer.name!r} runs per {producer.period}: --period "
                       f"looks like {EXAMPLES[producer.period]} ({FORMS[producer.period]}), "
                       f"not {shown(period)}") from None
    future = is_future(canonical, producer.period, datetime.now(ZoneInfo(timezone)))
    if future and not force:
        raise BadInput(f"producer {producer.name!r}: --period {canonical} is in the future "
                       f"({timezone}); producing it now "
                       "would make its scheduled run skip it: give --force to do so anyway")
    return canonical, future


def _warn_future(producer: ProducerConfig, period: str) -> None:
    print(f"signoff: warning: producer {safe(producer.name)} period {period} is in the future: "
          "its scheduled run will find it done and skip it", file=sys.stderr)


def _line(r: ProducerReport) -> str:
    what = (f"created {r.created}, existing {r.existing}" if r.ran
            else "already ran: nothing enqueued")
    return f"producer {safe(r.name)} ({safe(r.capability)}) period {safe(r.period)}: {what}"


def dry_run(config: Config, capability: str, producers: list[ProducerConfig],
            as_json: bool) -> int:
    """Print each producer's next three fire times in the config's time zone; no database."""
    from taskqueue.runtime.cron import cron_next  # APScheduler's cron, for this command only

    rows = [{"name": p.name, "capability": capability, "cron": p.cron,
             "timezone": config.timezone,
             "next": [t.isoformat() for t in cron_next(p.cron, config.timezone)]}
            for p in producers]
    if as_json:
        print_json(rows)
        return 0
    for r in rows:
        print(f"producer {safe(r['name'])} ({safe(capability)}) cron {safe(r['cron'])} "
              f"({r['timezone']}): next " + ", ".join(r["next"]))
    return 0


async def produce_cmd(args: Any) -> int:
    # The producer runtime is loaded by the command that runs one, not by every `signoff`.
    from taskqueue.runtime.handler import load_handler
    from taskqueue.runtime.producer import ProducerJob

    use_app_dir(args.app_dir)
    config = load_config(args.config)
    publish_path(config)
    producers = chosen(config, args.capability, args.name)
    if args.dry_run:
        if args.period or args.force:
            raise BadInput("--dry-run shows the schedule; it takes no --period or --force")
        return dry_run(config, args.capability, producers, args.json)
    periods = [check_period(args.period, p, config.timezone, force=args.force)
               for p in producers]
    for p, (period, future) in zip(producers, periods, strict=True):
        if future and period is not None:
            _warn_future(p, period)
    reports = []
    async with open_queue() as queue:
        for p, (period, _) in zip(producers, periods, strict=True):
            job = ProducerJob(queue, p.name, args.capability, load_handler(p.function),
                              period=p.period, timezone=config.timezone,
                              runner=f"cli:{p.name}")
            reports.append(await job.run_once(period=period))
    if args.json:
        print_json([{"name": r.name, "capability": r.capability, "period": r.period,
                     "ran": r.ran, "created": r.created, "existing": r.existing}
                    for r in reports])
    else:
        for r in reports:
            print(_line(r))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("produce", help="run a capability's producer once now")
    p.add_argument("capability")
    p.add_argument("name", nargs="?", help="one producer (default: all of the capability's)")
    p.add_argument("--period", help="the period to produce: YYYY-MM-DD (day), YYYY-MM-DDTHH "
                   "(hour) or YYYY-Www (week), by the producer's kind (default: the current one)")
    p.add_argument("--force", action="store_true",
                   help="produce a future period (its scheduled run will then skip it)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the next three times the schedule fires, in the config's "
                        "timezone; produce nothing")
    p.add_argument("--config", metavar="FILE", help="config file (default $SIGNOFF_CONFIG)")
    p.add_argument("--json", action="store_true")
    add_app_dir(p)
    p.set_defaults(func=produce_cmd)
