"""Every command's usage error is one line on stderr, exit 2, naming where help is; and
that help works."""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor

from taskqueue.cli.main import build_parser

from ..cli_helpers import OK, USAGE, Cli, closed_port


def commands() -> list[list[str]]:
    """Every command path of the parser: ["ls"], ["caps", "set"], ["embedded", "stop"], …"""
    found: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and path:
            found.append(path)
        for action in subs:
            for name, child in action.choices.items():
                walk(child, [*path, name])

    walk(build_parser(), [])
    return found


def test_the_parser_has_every_command_we_document() -> None:
    names = {" ".join(c) for c in commands()}
    assert {"enqueue", "claim", "park", "approve", "caps set", "caps ls", "embedded stop",
            "worker", "stats", "produce", "show"} <= names
    assert len(names) >= 24


def test_every_command_refuses_an_unknown_option_in_one_line_with_its_help_hint() -> None:
    # Usage errors never reach the database, so a closed port proves it too.
    cli = Cli(f"postgresql://postgres@127.0.0.1:{closed_port()}/signoff")
    paths = [*commands(), [], ["caps"], ["embedded"]]
    with ThreadPoolExecutor(4) as pool:
        procs = list(pool.map(lambda p: cli(*p, "--bogus-option"), paths))
    for path, proc in zip(paths, procs, strict=True):
        line = proc.stderr.rstrip("\n")
        assert proc.returncode == USAGE, (path, proc.returncode, proc.stderr)
        assert proc.stdout == "" and proc.stderr.count("\n") == 1, (path, proc.stderr)
        assert "Traceback" not in proc.stderr
        prog = " ".join(["signoff", *path])
        # Either the option is named, or a required argument the command misses first.
        assert line.startswith(("signoff: error: unrecognized arguments: --bogus-option",
                                "signoff: error: the following arguments are required: ",
                                "signoff: error: argument ")), line
        assert line.endswith(f"(see '{prog} --help')"), (path, line)


def test_missing_arguments_are_one_line_too() -> None:
    cli = Cli(f"postgresql://postgres@127.0.0.1:{closed_port()}/signoff")
    line = cli.fails(USAGE, "park", "1", "--worker", "w1")
    assert line == ("signoff: error: the following arguments are required: --question "
                    "(see 'signoff park --help')")
    line = cli.fast.fails(USAGE, "caps", "set", "demo", "--max-running", "-1")
    assert line.endswith("(see 'signoff caps set --help')") and "--max-running" in line


def test_help_still_works_for_every_command() -> None:
    cli = Cli(f"postgresql://postgres@127.0.0.1:{closed_port()}/signoff")
    assert cli("--help").returncode == OK
    for path in commands():
        proc = cli.fast(*path, "--help")
        assert proc.returncode == OK and proc.stdout.startswith(
            f"usage: signoff {' '.join(path)}"), (path, proc.stdout[:80], proc.stderr)
