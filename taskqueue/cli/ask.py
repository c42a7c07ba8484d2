"""`signoff ask CAP --question Q [--wait]`: ask a person for a sign-off from a shell script
or a CI job, through the database or a service's HTTP API (`--url`, SIGNOFF_TOKEN), and
with `--wait` exit with the decision's code (0 approved; docs/cli.md lists the others)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from taskqueue.cli.arguments import positive
from taskqueue.cli.asking import EXIT_CODES, add_asker_options, open_asker
from taskqueue.cli.inputs import cli_limits, parse_json, read_attachments
from taskqueue.cli.output import print_json, safe


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ask", help="ask a person for a sign-off (for scripts and CI); --wait for it",
        description="Park a request for a person's sign-off. With --wait, block until "
                    "someone decides: exit 0 on approve, 10 on revise (the note is "
                    "printed), 11 on skip, 12 on expiry, 13 when cancelled, 14 when "
                    "--timeout passes first.",
        epilog="example: signoff ask deploys --question 'Deploy web 1.2?' --key "
               "\"$CI_PIPELINE_ID\" --wait")
    p.add_argument("capability", help="the capability asked of (made, as external, when new)")
    p.add_argument("--question", required=True, help="what the person is asked (one line)")
    p.add_argument("--request", help="a JSON object: what is asked, shown as evidence")
    p.add_argument("--attach", action="append", default=[], metavar="FILE",
                   help="a file shown with the question (repeat for several)")
    p.add_argument("--expires-in", type=positive, metavar="SECONDS",
                   help="the request expires after this (default: the capability's TTL)")
    p.add_argument("--required-approvals", type=int, metavar="N",
                   help="distinct people who must approve (never below the capability's)")
    p.add_argument("--key", metavar="KEY",
                   help="idempotency key: asking again with it finds the same request")
    p.add_argument("--wait", action="store_true", help="block until a person decides")
    p.add_argument("--timeout", type=positive, metavar="SECONDS",
                   help="with --wait: give up after this (exit 14; the request stays open)")
    add_asker_options(p, "cli", "who asks, without --url (default cli; with --url: the "
                                "token's)")
    p.add_argument("--json", action="store_true", help="print the request's JSON")
    p.set_defaults(func=ask_cmd)


async def ask_cmd(args: Any) -> int:
    limits = cli_limits()
    request = parse_json(args.request, "--request", limits)
    files = read_attachments(args.attach, limits)
    if args.timeout is not None and not args.wait:
        sys.stderr.write("signoff: --timeout applies only with --wait\n")
        return 2
    async with open_asker(args.url, args.config, args.by) as asker:
        asked = await asker.park(args.capability, args.question, request=request,
                                 attachments=files, expires_in=args.expires_in,
                                 required_approvals=args.required_approvals, key=args.key)
        rid = int(asked["id"])
        if asked["status"] == "needs_approval":
            print(f"signoff: request {rid} waits for a decision "
                  f"(signoff approve {rid} --by NAME)", file=sys.stderr, flush=True)
        if not args.wait:
            if args.json:
                print_json(asked)
            else:
                print(rid)
            return 0
        found = await asker.wait(rid, args.timeout)
    return _said(found, args.json)


def _said(found: dict[str, Any], as_json: bool) -> int:
    """Print the outcome; its exit code."""
    status = str(found.get("status"))
    if as_json:
        print_json(found)
    elif status == "revised":
        print(f"revised: {safe(found.get('note') or '')}")
    elif status == "needs_approval":
        print(f"needs_approval: no decision on request {found.get('id')} yet")
    else:
        by = found.get("decided_by")
        print(f"{status}" + (f" by {safe(by)}" if by and status != "expired" else ""))
    return EXIT_CODES.get(status, 1)
