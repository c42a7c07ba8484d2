"""The `signoff` command line: argument parsing, dispatch, and exit codes."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import re
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any, NoReturn, cast

from taskqueue.cli import commands as cmd
from taskqueue.cli import manners
from taskqueue.cli.arguments import cap_value, non_negative, on_off, positive
from taskqueue.cli.manners import STATUSES
from taskqueue.errors import did_you_mean, one_line, printable, run_main
from taskqueue.runtime.logsetup import configure_logging, log_options

EXIT_USAGE = 2
# Output cut short by a reader that closed the pipe (`signoff ls | head -1`): the status a
# shell reports for a tool that SIGPIPE ended (128 + 13), as `yes | head -1` gives.
EXIT_CLOSED_PIPE = 141
# Packages add subcommands here: each entry point is an `add_parser(subparsers)` callable.
COMMANDS_GROUP = "signoff.commands"
# The commands that live in a module of their own (taskqueue/cli/MODULE.py, whose
# `add_parser` adds them), in the order help lists them. A command line that names one
# imports that module alone: `signoff ls` does not load ask's HTTP client, the MCP server or
# the embedded server's controls (issue 44's CLI start-up).
MODULE_COMMANDS = {"worker": "worker", "stats": "stats", "produce": "produce",
                   "prune": "prune", "embedded": "embedded", "attachment": "attachments",
                   "init": "init", "completion": "completion", "audit": "audit",
                   "ask": "ask", "mcp": "mcp_server"}

log = logging.getLogger("signoff.cli")

_CAP_TYPES: dict[str, Any] = {"max_running": cap_value, "max_parked": cap_value,
                              "daily_new": cap_value, "timezone": str,
                              "signed_approvals": on_off}
_CAP_METAVARS = {"max_running": "N|none", "max_parked": "N|none", "daily_new": "N|none",
                 "timezone": "ZONE", "lease": "SECONDS", "approval_ttl": "SECONDS",
                 "retry_base": "SECONDS", "max_attempts": "N", "required_approvals": "N",
                 "signed_approvals": "on|off"}


class Parser(argparse.ArgumentParser):
    """Usage errors are one line naming the problem and where help is, then exit 2."""

    def error(self, message: str) -> NoReturn:
        self._usage_error(_with_suggestion(message), self.prog)

    def _usage_error(self, message: str, prog: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"signoff: error: {printable(message.strip())} "
                              f"(see '{prog} --help')\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, but an unknown option points at the command's help, not ours."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = _chosen(self, parsed)
            options = [o for a in chosen._actions for o in a.option_strings]
            hint = did_you_mean(extras[0], options) if extras[0].startswith("--") else ""
            self._usage_error(f"unrecognized arguments: {' '.join(extras)}{hint}", chosen.prog)
        return parsed


# argparse's own wording for a word outside a command's choices (Python 3.11 to 3.13).
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<all>.*)\)\s*$")


def _with_suggestion(message: str) -> str:
    """argparse's "invalid choice" with the closest choice suggested first, as git does."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return message
    hint = did_you_mean(found["word"], re.findall(r"'([^']*)'", found["all"]))
    return message[:found.start()] + f"invalid choice: {found['word']!r}{hint} " \
        f"(choose from {found['all']})"


def _chosen(parser: argparse.ArgumentParser, parsed: argparse.Namespace
            ) -> argparse.ArgumentParser:
    """The (sub)command parser the arguments chose: `signoff caps set`, not `signoff`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            child = action.choices.get(getattr(parsed, action.dest, None) or "")
            if child is not None:
                return _chosen(child, parsed)
    return parser


def _add_producer_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("migrate", help="apply pending migrations")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd.migrate_cmd)

    p = sub.add_parser("enqueue", help="add a task (or a JSONL batch)")
    p.add_argument("capability")
    p.add_argument("--payload", help="a JSON object (default {})")
    p.add_argument("--from-jsonl", metavar="FILE", help="one payload per line; - for stdin")
    p.add_argument("--priority", type=int, default=0, help="higher is claimed first (default 0)")
    p.add_argument("--dedupe-key", metavar="KEY",
                   help="at most one unfinished task of the capability has this key")
    p.add_argument("--delay", type=non_negative, default=0, metavar="SECONDS",
                   help="not claimable before this many seconds")
    p.add_argument("--max-attempts", type=int, metavar="N",
                   help="attempts before the task is dead (default: the capability's)")
    p.add_argument("--config", metavar="FILE",
                   help="config file (default $SIGNOFF_CONFIG): the capability's settings "
                        "in it apply to the new tasks and are written to the database")
    p.add_argument("--by", metavar="NAME",
                   help="who asks for it, recorded as the task's requester (their own approve "
                        "never counts); a configured person when the config has [people.*]")
    p.add_argument("--json", action="store_true",
                   help="print [{id, created}, ...] instead of one id a line")
    p.set_defaults(func=cmd.enqueue_cmd)


def _add_worker_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("claim", help="claim the next task of a capability (prints JSON)")
    p.add_argument("capability")
    p.add_argument("--worker", required=True, help="who claims (a name of your choice)")
    p.add_argument("--lease", type=positive, metavar="SECONDS",
                   help="how long the claim holds without a heartbeat "
                        "(default: the capability's)")
    p.add_argument("--json", action="store_true", help="accepted: the output is always JSON")
    p.set_defaults(func=cmd.claim_cmd)

    def fenced(name: str, help_: str) -> argparse.ArgumentParser:
        q = sub.add_parser(name, help=help_)
        q.add_argument("id", type=int)
        q.add_argument("--worker", required=True)
        q.add_argument("--claim", metavar="TOKEN", help="fence on this claim token too")
        q.add_argument("--json", action="store_true")
        return q

    p = fenced("heartbeat", "extend the lease of a task you hold")
    p.add_argument("--lease", type=positive, metavar="SECONDS",
                   help="the new lease from now (default: the capability's)")
    p.set_defaults(func=cmd.heartbeat_cmd)
    p = fenced("release", "put a task you hold back to pending")
    p.add_argument("--state", help="a JSON object replacing the task's state")
    p.add_argument("--delay", type=non_negative, default=0, metavar="SECONDS",
                   help="not claimable again before this many seconds")
    p.set_defaults(func=cmd.release_cmd)
    p = fenced("park", "stop a task you hold at a question for a person")
    p.add_argument("--question", required=True, help="what the person is asked (one line)")
    p.add_argument("--request", help="a JSON object describing what is asked")
    p.add_argument("--attach", action="append", default=[], metavar="FILE",
                   help="a file shown with the question (repeat for several)")
    p.add_argument("--expires-in", type=positive, metavar="SECONDS",
                   help="the approval expires after this (default: the capability's TTL)")
    p.set_defaults(func=cmd.park_cmd)
    p = fenced("complete", "finish a task you hold")
    p.add_argument("--result", help="a JSON value")
    p.set_defaults(func=cmd.complete_cmd)
    p = fenced("fail", "record a failure of a task you hold")
    p.add_argument("--error", required=True, help="what went wrong (one line)")
    p.add_argument("--no-retry", action="store_true",
                   help="fail for good now instead of retrying")
    p.set_defaults(func=cmd.fail_cmd)


def _add_people_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, note_required in (("approve", False), ("skip", False), ("revise", True)):
        p = sub.add_parser(name, help=f"{name} a parked task's open approval",
                           description=f"Decide a parked task's open approval: {name}. "
                                       "The decisions are approve, skip and revise.")
        p.add_argument("id", type=int, help="the task's id")
        p.add_argument("--by", required=True,
                       help="who decides: a configured person when the config has [people.*] "
                            "(the OS user and host are recorded beside it as cli:USER@HOST)")
        p.add_argument("--config", metavar="FILE",
                       help="config file (default $SIGNOFF_CONFIG): its [people.NAME] tables")
        p.add_argument("--note", required=note_required,
                       help="what to change (required)" if note_required
                       else "a note kept with the decision")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=cmd.decide_cmd, decision=name)

    for name, func in (("retry", cmd.retry_cmd), ("cancel", cmd.cancel_cmd)):
        p = sub.add_parser(name, help=f"{name} a task")
        p.add_argument("id", type=int, help="the task's id")
        p.add_argument("--by", help="who asks (recorded in the task's events)")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)


def _add_reading_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("reap", help="run the reaper once")
    p.add_argument("--orphan-after", type=positive, metavar="SECONDS",
                   help="also fail running tasks whose worker is silent this long")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd.reap_cmd)

    p = sub.add_parser("signals", help="health signals: incident, nudge and more")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd.signals_cmd)

    p = sub.add_parser("ls", help="list tasks")
    p.add_argument("--status", help=f"only this status: {STATUSES}")
    p.add_argument("--capability", help="only this capability")
    p.add_argument("--limit", type=int, default=1000, metavar="N",
                   help="at most this many (default 1000)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd.ls_cmd)

    p = sub.add_parser("show", help="a task with its approvals and events")
    p.add_argument("id", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd.show_cmd)


def _add_caps_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from taskqueue.config.model import CAP_SETTINGS  # the config's model, for `caps` alone

    caps = sub.add_parser("caps", help="per-capability caps and settings",
                          description="Per-capability caps and settings: `caps set` changes "
                                      "them, `caps ls` lists them.")
    caps_sub = caps.add_subparsers(dest="caps_command", required=True, metavar="{set,ls}")
    p = caps_sub.add_parser(
        "set", help="change a capability's settings",
        description="Change some settings of a capability; the others keep their values.",
        epilog="example: signoff caps set greet --max-running 2 --daily-new none")
    p.add_argument("capability", help="the capability's name")
    for s in CAP_SETTINGS:
        p.add_argument(f"--{s.option.replace('_', '-')}", type=_CAP_TYPES.get(s.option, int),
                       default=cmd.UNSET, help=s.help, metavar=_CAP_METAVARS.get(s.option))
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd.caps_set_cmd)
    p = caps_sub.add_parser("ls", help="list capabilities' settings")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd.caps_ls_cmd)


# The commands built here, by the function that adds them: a command line that names one
# builds its group alone (each parser argparse builds costs every run).
_GROUPS = {_add_producer_commands: ("migrate", "enqueue"),
           _add_worker_commands: ("claim", "heartbeat", "release", "park", "complete", "fail"),
           _add_people_commands: ("approve", "skip", "revise", "retry", "cancel"),
           _add_reading_commands: ("reap", "signals", "ls", "show"),
           _add_caps_commands: ("caps",)}


class _Version(argparse.Action):
    """--version, read from the installed package only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default,
                         help=help or "show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"signoff {_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser(*, plugins: bool = True, command: str | None = None
                 ) -> argparse.ArgumentParser:
    """The whole parser; `plugins=False` leaves out the subcommands other packages add
    (a built-in command does not need them, and finding them costs each run time), and a
    built-in `command` leaves out every other command but those added with it (its group in
    _GROUPS, or its module in MODULE_COMMANDS): a parser that can parse that one command
    line, never one to list the commands."""
    parser = Parser(
        prog="signoff", description="A durable PostgreSQL task queue that stops for sign-off.")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log lines (-vv for debug)")
    parser.add_argument("--version", action=_Version)
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]", parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND"))
    built_in = command in MODULE_COMMANDS or any(command in names
                                                  for names in _GROUPS.values())
    for add, names in _GROUPS.items():
        if not built_in or command in names:
            add(sub)
    for name, module in MODULE_COMMANDS.items():
        if not built_in or command == name:
            importlib.import_module(f"taskqueue.cli.{module}").add_parser(sub)
    if plugins:
        _add_plugin_commands(sub)
    manners.finish(parser)
    # `signoff completion` describes the whole parser; it finds it here, not by import.
    parser.set_defaults(root_parser=parser)
    return parser


def _version() -> str:
    try:
        return version("signoff")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _add_plugin_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Subcommands other packages register under COMMANDS_GROUP; one that fails to load
    is left out with a one-line warning, so it never breaks the rest of the CLI."""
    for ep in entry_points(group=COMMANDS_GROUP):
        try:
            ep.load()(sub)
        except Exception as exc:
            log.warning("signoff: command %r from %s left out: %s", ep.name, ep.value,
                        one_line(exc))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns (and exits with) its documented exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(plugins=False, command=_command_word(argv))
    if _needs_plugins(parser, argv):
        parser = build_parser()
    try:
        args = parser.parse_args(argv)  # --help into a closed pipe: exit 0
        level = logging.WARNING - 10 * min(args.verbose, 2)
        try:
            log_format, level = log_options(getattr(args, "log_format", None),
                                            getattr(args, "log_level", None), level)
        except ValueError as exc:
            parser.error(str(exc))
        configure_logging(level, log_format)
        code = _run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()
    return code


def _command_word(argv: Sequence[str]) -> str | None:
    """The command the line names (`signoff`'s own options take no value), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


def _needs_plugins(built_in: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """Whether the command line may name a plugin's command, or needs every command: no
    command (`signoff --help` lists them), `completion` (it describes them), or a word that
    is not a built-in command."""
    command = _command_word(argv)
    return command in (None, "completion") or command not in _commands(built_in)


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    return {name for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for name in action.choices}


def closed_pipe() -> int:
    """The reader of stdout went away: stop quietly with EXIT_CLOSED_PIPE. What is still
    buffered goes to /dev/null, so the interpreter's last flush cannot fail again and
    print a traceback (the recipe of Python's signal documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's StringIO)
        pass
    finally:
        os.close(devnull)
    return EXIT_CLOSED_PIPE


def _run(args: Any) -> int:
    return run_main(lambda: int(asyncio.run(args.func(args))))


if __name__ == "__main__":
    raise SystemExit(main())
