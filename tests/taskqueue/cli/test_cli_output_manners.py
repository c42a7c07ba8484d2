"""The CLI's manners with its output: a closed pipe ends a command quietly (exit 141, no
traceback), and every command prints JSON with --json or its help says why not."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from taskqueue.cli.main import EXIT_CLOSED_PIPE, build_parser

from ..cli_helpers import ROOT, USAGE, Cli

SIGNOFF = str(Path(sys.executable).with_name("signoff"))
H = "tests.taskqueue.handlers_for_tests"


def leaf_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                  ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every runnable command (`caps set`, `embedded stop`, the plugins' too) and its parser."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from leaf_commands(child, (*path, name))


COMMANDS = dict(leaf_commands(build_parser()))
# Commands that print no document, and say so in their help.
NO_JSON = {("worker",), ("attachment", "get"), ("completion",), ("mcp",), ("token", "add")}


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(f"""
[capabilities.demo]
handler = "{H}:quick"
[[capabilities.demo.producers]]
name = "nightly"
function = "{H}:nightly"
cron = "30 2 * * *"
""")
    return path


# -- --json on every command ------------------------------------------------------------

@pytest.mark.parametrize("command", sorted(COMMANDS), ids=" ".join)
def test_every_command_has_json_or_its_help_says_why_not(command: tuple[str, ...]) -> None:
    parser = COMMANDS[command]
    has_json = any("--json" in action.option_strings for action in parser._actions)
    if command in NO_JSON:
        assert not has_json
        assert "no --json" in " ".join(parser.format_help().split()), parser.format_help()
    else:
        assert has_json, f"signoff {' '.join(command)} has no --json"


def _claimed(cli: Cli) -> str:
    task_id = cli.enqueue()
    cli.claim()
    return str(task_id)


def _parked(cli: Cli) -> str:
    task_id = _claimed(cli)
    cli.fast.ok("park", task_id, "--worker", "w1", "--question", "Go?")
    return task_id


def _with_attachment(cli: Cli, folder: Path) -> str:
    task_id = _claimed(cli)
    evidence = folder.parent / "plan.txt"
    evidence.write_text("resize web-1")
    cli.fast.ok("park", task_id, "--worker", "w1", "--question", "Go?", "--attach", str(evidence))
    return task_id


W = ("--worker", "w1", "--json")
# Each command with --json: what to set up first, then its arguments.
RUNS: dict[tuple[str, ...], Callable[[Cli, Path], list[str]]] = {
    ("migrate",): lambda c, f: ["migrate"],
    ("enqueue",): lambda c, f: ["enqueue", "demo", "--payload", '{"n": 1}'],
    ("claim",): lambda c, f: [str(c.enqueue()) and "claim", "demo", "--worker", "w1"],
    ("heartbeat",): lambda c, f: ["heartbeat", _claimed(c), *W],
    ("release",): lambda c, f: ["release", _claimed(c), *W],
    ("park",): lambda c, f: ["park", _claimed(c), *W, "--question", "Go?"],
    ("complete",): lambda c, f: ["complete", _claimed(c), *W],
    ("fail",): lambda c, f: ["fail", _claimed(c), *W, "--error", "boom"],
    ("approve",): lambda c, f: ["approve", _parked(c), "--by", "ada"],
    ("skip",): lambda c, f: ["skip", _parked(c), "--by", "ada"],
    ("revise",): lambda c, f: ["revise", _parked(c), "--by", "ada", "--note", "shorter"],
    ("retry",): lambda c, f: ["retry", str(c.enqueue()), "--by", "ada"],
    ("cancel",): lambda c, f: ["cancel", str(c.enqueue()), "--by", "ada"],
    ("reap",): lambda c, f: ["reap"],
    ("signals",): lambda c, f: ["signals"],
    ("ls",): lambda c, f: [str(c.enqueue()) and "ls"],
    ("show",): lambda c, f: ["show", str(c.enqueue())],
    ("caps", "set"): lambda c, f: ["caps", "set", "demo", "--max-running", "2"],
    ("caps", "ls"): lambda c, f: [c.fast.ok("caps", "set", "demo", "--lease", "60") and "caps",
                                  "ls"],
    ("stats",): lambda c, f: ["stats", "demo"],
    ("produce",): lambda c, f: ["produce", "demo", "--config", str(f)],
    ("prune",): lambda c, f: ["prune", "--older-than", "30"],
    ("attachment", "ls"): lambda c, f: ["attachment", "ls", _with_attachment(c, f)],
    ("embedded", "stop"): lambda c, f: ["embedded", "stop"],
    ("embedded", "status"): lambda c, f: ["embedded", "status"],
    ("init",): lambda c, f: ["init", str(f.parent / "project")],
    ("audit", "verify"): lambda c, f: ["audit", "verify"],
    ("ask",): lambda c, f: ["ask", "deploys", "--question", "Deploy 1.2?"],
}


def test_every_command_with_json_is_exercised_below() -> None:
    # tests/workloads/briefing/test_cli.py, tests/bot/web/test_cli_users.py and
    # tests/bot/api/test_tokens_cli.py run theirs.
    plugins = {("briefing",), ("web", "user", "add"), ("web", "user", "remove"),
               ("web", "user", "list"), ("token", "list"), ("token", "revoke")}
    assert set(COMMANDS) - NO_JSON - plugins == set(RUNS)


@pytest.mark.parametrize("command", sorted(RUNS), ids=" ".join)
def test_json_prints_one_document(command: tuple[str, ...], cli: Cli, config: Path,
                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIGNOFF_DATA_DIR", str(tmp_path / "data"))  # embedded: a folder of its own
    args = RUNS[command](cli, config)
    if command == ("retry",):
        cli.fast.ok("cancel", args[1])  # a cancelled task can be retried
    if "--json" not in args:
        args.append("--json")
    doc: Any = cli.fast.json(*args)
    assert isinstance(doc, dict | list) and doc not in ({}, [])


def test_prune_speaks_of_days(cli: Cli) -> None:
    help_text = " ".join(COMMANDS[("prune",)].format_help().split())
    assert "--older-than DAYS" in help_text and "days" in help_text.replace("DAYS", "")
    for bad in ("0", "-3", "nan", "inf", "ten", "99999"):
        line = cli.fast.fails(USAGE, "prune", "--older-than", bad)
        assert "must be a number of days" in line, line


# -- a closed pipe ------------------------------------------------------------------------

def run_into_closed_pipe(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`signoff ARGS` with stdout a pipe whose reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([SIGNOFF, *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, env=os.environ | {"DATABASE_URL": dsn},
                              timeout=60, check=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args", [("ls",), ("ls", "--json"), ("stats", "demo"), ("show", "1"),
                                  ("caps", "ls", "--json"), ("enqueue", "demo")], ids=" ".join)
def test_a_closed_pipe_ends_the_command_quietly_with_141(cli: Cli, dsn: str,
                                                          args: tuple[str, ...]) -> None:
    cli.ok("caps", "set", "demo", "--max-attempts", "3")  # no "no settings yet" warning
    cli.enqueue()
    done = run_into_closed_pipe(dsn, *args)
    assert (done.returncode, done.stderr) == (EXIT_CLOSED_PIPE, "")


@pytest.mark.parametrize("args", [("--help",), ("ls", "--help"), ("caps", "set", "--help")],
                         ids=" ".join)
def test_help_into_a_closed_pipe_ends_quietly_with_0(dsn: str, args: tuple[str, ...]) -> None:
    done = run_into_closed_pipe(dsn, *args)  # argparse ignores the failed write
    assert (done.returncode, done.stderr) == (0, "")


def test_head_reads_the_first_line_of_a_long_listing_and_nothing_complains(
        cli: Cli, dsn: str) -> None:
    cli.fast.ok("enqueue", "demo", "--from-jsonl", "-",
                stdin="".join(f'{{"n": {i}}}\n' for i in range(3000)))
    for command in ("ls --limit 3000", "ls --limit 3000 --json", "--help", "stats demo"):
        done = subprocess.run(
            ["bash", "-c", f'"$0" {command} | head -1; echo "status=${{PIPESTATUS[0]}}"',
             SIGNOFF], capture_output=True, text=True, cwd=ROOT,
            env=os.environ | {"DATABASE_URL": dsn}, timeout=60, check=False)
        first, status = done.stdout.splitlines()
        assert done.stderr == "", (command, done.stderr)
        assert status in ("status=0", f"status={EXIT_CLOSED_PIPE}"), (command, status)
        assert first.strip(), command
    listing = subprocess.run(["bash", "-c", '"$0" ls --limit 3000 | head -1 >/dev/null; '
                              'echo "${PIPESTATUS[0]}"', SIGNOFF], capture_output=True,
                             text=True, env=os.environ | {"DATABASE_URL": dsn}, timeout=60,
                             check=False)
    assert listing.stdout.strip() == str(EXIT_CLOSED_PIPE)  # 3000 rows outlast head
    assert json.loads(cli.fast.ok("ls", "--limit", "1", "--json"))  # the database is intact
