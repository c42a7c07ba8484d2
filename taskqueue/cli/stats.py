"""`signoff stats CAP [--json] [--postings]`: one capability's pipeline from the database;
`--decisions` hands over to taskqueue/cli/decisions.py."""

from __future__ import annotations

import argparse
from typing import Any

from taskqueue.cli.commands import open_queue
from taskqueue.cli.decisions import decisions_cmd
from taskqueue.cli.output import print_json, safe, when
from taskqueue.errors import BadInput
from taskqueue.maintenance.stats import Stats, read_stats


def print_stats(stats: Stats) -> None:
    doc = stats.to_json()
    print(f"{safe(stats.capability)} (read at {when(stats.read_at)})")
    for name in ("enqueued", "skipped", "expired", "failed"):
        print(f"  {name + ':':<11}{doc[name]}")
    for title, counts in (("by status", stats.by_status), ("stages reached", stats.stages),
                          ("skipped by reason", stats.skipped_by_reason),
                          ("filtered by reason", stats.filtered_by_reason)):
        print(f"  {title}:" + ("" if counts else " -"))
        for name, n in counts.items():
            print(f"    {n:>5}  {safe(name)}")
    if stats.report_runs:
        print(f"  producer reports: {stats.report_runs}, last {when(stats.last_report_at)}")


def print_postings(items: list[dict[str, Any]]) -> None:
    """One line per item of the latest report: outcome, score, where it came from, why."""
    if not items:
        print("no per-item report: no producer run of this capability recorded `postings`")
        return
    for row in items:
        item = row["item"] if isinstance(row["item"], dict) else {}
        reasons = item.get("reasons") or []
        why = "; ".join(str(r) for r in reasons) if isinstance(reasons, list) else str(reasons)
        score = item.get("score")
        print(f"{safe(item.get('outcome', '?')):<16} "
              f"{'' if score is None else safe(score):>6}  "
              f"{safe(item.get('company', ''))}: {safe(item.get('title', ''))}"
              + (f"  [{safe(why)}]" if why else "")
              + (f"  task {safe(item['task_id'])}" if item.get("task_id") else ""))


async def stats_cmd(args: Any) -> int:
    if args.decisions:
        if args.postings:
            raise BadInput("--decisions and --postings are separate reports: give one")
        return await decisions_cmd(args)
    if args.since is not None:
        raise BadInput("--since goes with --decisions")
    if args.capability is None:  # the usage error (exit 2) it was before --decisions
        args.stats_parser.error("the following arguments are required: capability")
    async with open_queue() as queue:
        stats = await read_stats(queue, args.capability)
        items = (await queue.stats_report_postings(args.capability, runs=args.runs)
                 if args.postings else [])
    if args.json:
        doc = stats.to_json()
        if args.postings:
            doc["postings"] = [r["item"] | {"producer": r["producer"], "period": r["period"]}
                               if isinstance(r["item"], dict) else r["item"] for r in items]
        print_json(doc)
    elif args.postings:
        print_postings(items)
    else:
        print_stats(stats)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("stats", help="a capability's pipeline: statuses, stages, reasons")
    p.add_argument("capability", nargs="?",
                   help="the capability (optional with --decisions: all of them)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--postings", action="store_true",
                   help="each item of the latest producer report: where it went and why")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="with --postings: the latest N runs (default 1)")
    p.add_argument("--decisions", action="store_true",
                   help="per capability and person: requests, decisions, expiries and the "
                        "time to decide (p50, p90, max)")
    p.add_argument("--since", metavar="DAYS",
                   help="with --decisions: only the last DAYS days (up to 3650)")
    p.set_defaults(func=stats_cmd, stats_parser=p)
