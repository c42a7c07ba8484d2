"""The `signoff.commands` entry points: extra subcommands, and a broken one left out."""

from __future__ import annotations

import argparse
import logging
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from taskqueue.cli import main as cli_main


def add_hello(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("hello", help="a plugin's command")
    p.add_argument("--name", default="world")


def _points(*values: tuple[str, str]) -> Any:
    found = [EntryPoint(name, value, cli_main.COMMANDS_GROUP) for name, value in values]
    return lambda group: found if group == cli_main.COMMANDS_GROUP else []


def test_an_entry_point_adds_a_subcommand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_main, "entry_points",
                        _points(("hello", f"{__name__}:add_hello")))
    args = cli_main.build_parser().parse_args(["hello", "--name", "mara"])
    assert (args.command, args.name) == ("hello", "mara")


def test_a_broken_plugin_is_left_out_with_one_warning(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(cli_main, "entry_points", _points(
        ("gone", "no_such_module_anywhere:add_parser"),
        ("clash", "taskqueue.cli.produce:add_parser"),  # `produce` exists already
        ("hello", f"{__name__}:add_hello")))
    with caplog.at_level(logging.WARNING, logger="signoff.cli"):
        parser = cli_main.build_parser()
    assert parser.parse_args(["hello"]).command == "hello"
    assert parser.parse_args(["ls"]).command == "ls"
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert "'gone' from no_such_module_anywhere:add_parser left out" in warnings[0]
    assert "'clash'" in warnings[1]

