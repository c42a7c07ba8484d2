"""`signoff completion bash|zsh`: the shell completion script, generated from the parser,
with the values an option takes (statuses, decisions, capabilities) completed too."""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from taskqueue.cli.manners import subcommands
from taskqueue.store.states import Decision, Status

SHELLS = ("bash", "zsh")
VALUES = ("statuses", "decisions", "capabilities")
# An argument's dest -> the kind of value it takes.
_KIND_BY_DEST = {"status": "statuses", "decision": "decisions", "capability": "capabilities",
                 "capabilities": "capabilities"}
# Completion must never hang a shell on a database that does not answer.
_CONNECT_SECONDS = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `completion` on the `signoff` command line."""
    p = sub.add_parser(
        "completion", help="print the shell completion script (bash or zsh)",
        description="Print a completion script for your shell. Install it once: bash: "
                    "signoff completion bash > ~/.local/share/bash-completion/completions/"
                    "signoff ; zsh: signoff completion zsh > \"${fpath[1]}/_signoff\" "
                    "(then start a new shell). It has no --json: what it prints is the "
                    "script itself.")
    p.add_argument("shell", choices=SHELLS, help="the shell: bash or zsh")
    # What the script itself calls for an option's values, one a line (hidden from help).
    p.add_argument("--values", choices=VALUES, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


async def run(args: Any) -> int:
    """Print the script for the whole `signoff` parser (plugins' commands included), or,
    with --values, the values of one kind."""
    if args.values:
        for value in await values(args.values):
            print(value)
        return 0
    import shtab

    _mark_values(args.root_parser)
    print(shtab.complete(args.root_parser, shell=args.shell), end="")
    return 0


def _mark_values(parser: argparse.ArgumentParser) -> None:
    """Give every argument that takes a status, a decision or a capability its completer:
    the running `signoff` prints the values, so they are today's, not the script's."""
    import shtab

    for _words, child, _help in [((), parser, None), *subcommands(parser)]:
        for action in child._actions:
            kind = _KIND_BY_DEST.get(action.dest)
            if kind and not action.choices and action.nargs != 0:
                action.complete = shtab.cmd(  # type: ignore[attr-defined]
                    f"signoff completion bash --values {kind} 2>/dev/null")


async def values(kind: str) -> list[str]:
    """The values of `kind`; capabilities from the database when it answers at once, and
    none otherwise (never starting the embedded server for a completion)."""
    if kind == "statuses":
        return [s.value for s in Status]
    if kind == "decisions":
        return [d.value for d in Decision if d is not Decision.EXPIRED]
    return await _capabilities()


async def _capabilities() -> list[str]:
    from taskqueue.embedded import server as embedded
    from taskqueue.queues.whole import TaskQueue

    dsn = os.environ.get("DATABASE_URL")
    if not dsn and not embedded.running():
        return []
    try:
        async with asyncio.timeout(_CONNECT_SECONDS), TaskQueue.connect(
                dsn or embedded.start(), min_size=1, max_size=1) as queue:
            settings = {c.capability for c in await queue.capability_list()}
            return sorted(settings | {r["capability"] for r in await queue.queue_summary()})
    except Exception:  # a completion says nothing rather than print an error into a prompt
        return []
