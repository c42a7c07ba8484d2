"""`signoff audit [--since DAYS] [--json]`: the record's headline figures, computed from the
database; `signoff audit verify [--json]`: the hash chain and the live rows checked."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta
from typing import Any

from taskqueue.cli.commands import open_queue
from taskqueue.cli.decisions import since_days
from taskqueue.cli.output import print_json, safe
from taskqueue.errors import AuditMismatch
from taskqueue.maintenance.audit import audit_figures, audit_verify
from taskqueue.store.models import JSON


async def verify_cmd(args: Any) -> int:
    async with open_queue() as queue:
        report = await audit_verify(queue)
    if args.json:
        print_json(report.to_json())
    elif report.ok:
        print(f"audit verify: {report.records} records checked, the chain is whole; "
              f"{report.live_rows} live decisions, approves and gated actions match it "
              f"(head {report.head})")
    if not report.ok:
        # One line on stderr, as every failure (with --json the document says them all).
        sys.stdout.flush()
        raise AuditMismatch(f"audit verify: {safe(report.problems[0].line())} "
                            f"({len(report.problems)} problem(s), {report.records} records)")
    return 0


async def audit_cmd(args: Any) -> int:
    days = since_days(args.since)
    since = None if days is None else datetime.now().astimezone() - timedelta(days=days)
    async with open_queue() as queue:
        figures = await audit_figures(queue, since)
    if args.json:
        print_json(figures | {"since_days": days})
    else:
        print_figures(figures, days)
    return 0


def print_figures(f: JSON, days: float | None) -> None:
    window = f"the last {days:g} days" if days is not None else "all recorded history"
    tasks = f["tasks"]
    print(f"audit of {window}")
    print(f"{sum(t['tasks'] for t in tasks.values())} tasks across {len(tasks)} "
          f"capabilit{'y' if len(tasks) == 1 else 'ies'}, "
          f"{f['gates_asked']} human-approval gates asked, "
          f"{f['gated_actions_without_decision']} gated actions without a human decision, "
          f"{f['expired']} expired")
    for name, t in tasks.items():
        print(f"  {safe(name)}: {t['tasks']} tasks, {t['claimed']} claimed, {t['asked']} asked, "
              f"{t['approved']} approved, {t['completed']} completed, {t['skipped']} skipped, "
              f"{t['expired']} expired, {t['failed']} failed")
        for label, counts in (("stages", t["stages"]), ("filtered", t["producer_filtered"])):
            if counts:
                shown = ", ".join(f"{safe(k)} {v}" for k, v in sorted(counts.items()))
                print(f"    {label}: {shown}")
    print(f"{len(f['gated_actions'])} gated actions performed:")
    for a in f["gated_actions"]:
        who = ", ".join(safe(p) for p in a["approved_by"]) or "nobody"
        mark = "" if a["decided"] else "  WITHOUT A HUMAN DECISION"
        print(f"  task {a['task_id']} {safe(a['kind'])} {safe(a['fingerprint'])}: "
              f"approved by {who}{mark}")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit", help="who decided: the record's figures; `audit verify` checks the chain",
        description="The figures of the record, computed from the database: tasks per "
                    "capability, approval gates asked, gated actions and who approved each, "
                    "gated actions without a human decision, expired approvals. "
                    "`signoff audit verify` recomputes the hash chain of decisions, approves "
                    "and gated actions and checks the live rows against it (exit 9 when "
                    "something was changed, removed or inserted).",
        epilog="example: signoff audit --since 30 --json (and: signoff audit verify)")
    p.add_argument("--since", metavar="DAYS", help="only the last DAYS days (up to 3650)")
    p.add_argument("--json", action="store_true",
                   help="one document: tasks, gates_asked, gated_actions, "
                        "gated_actions_without_decision, expired")
    p.set_defaults(func=audit_cmd)
    verbs = p.add_subparsers(dest="audit_command", required=False, metavar="{verify}")
    v = verbs.add_parser("verify", help="recompute the hash chain and check the live rows",
                         description="Recompute the hash chain and check the live rows "
                                     "against it; exit 9 naming the first problem.",
                         epilog="example: signoff audit verify --json")
    v.add_argument("--json", action="store_true",
                   help="print {ok, records, live_rows, head, problems}")
    v.set_defaults(func=verify_cmd)
