"""The public API is imported on first use: `import taskqueue` loads no driver, web server or
runtime; every public name still resolves; and a built-in `signoff` command loads neither
aiohttp, the worker runtime nor the plugins' commands (issue 26: a CLI that answers fast)."""

from __future__ import annotations

import ast
import asyncio
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import taskqueue
from taskqueue import TaskQueue
from tests.taskqueue.cli_helpers import ROOT

# APScheduler's cron and the handler loader serve a config's checks and the commands that
# run work; `signoff ls` without a config file needs neither.
HEAVY = ("aiohttp", "taskqueue.runtime.worker", "taskqueue.http.server",
         "bot.web.cli", "workloads.briefing.cli", "apscheduler", "taskqueue.runtime.handler",
         "taskqueue.runtime.cron", "taskqueue.maintenance.reaper")
# The commands with modules of their own, which a command line naming another command does
# not import (issue 44): ask's HTTP client with tenacity, the MCP server, the embedded
# server's controls.
OTHER_COMMANDS = ("taskqueue.cli.ask", "taskqueue.cli.remote", "tenacity",
                  "taskqueue.cli.mcp_server", "taskqueue.cli.embedded",
                  "taskqueue.embedded.server", "taskqueue.cli.worker", "taskqueue.cli.stats",
                  "taskqueue.cli.audit", "taskqueue.cli.completion")


def _loaded(code: str, env: dict[str, str] | None = None) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_taskqueue_loads_nothing_heavy() -> None:
    heavy = ("psycopg", *HEAVY)
    found = _loaded("import json, sys, taskqueue\n"
                    f"print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))")
    assert found == []


def test_every_public_name_resolves_and_is_listed() -> None:
    for name in taskqueue.__all__:
        assert getattr(taskqueue, name) is not None, name
    assert set(taskqueue.__all__) <= set(dir(taskqueue))
    assert taskqueue.TaskQueue.__module__ == "taskqueue.queues.whole"
    try:
        taskqueue.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "no attribute 'NoSuchName'" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


# What `signoff ls`, `show` and `approve` leave unloaded (issue 44's CLI start-up): they use
# the people's part of the queue on one connection, with no config file named.
NOT_FOR_A_READ = ("taskqueue.queues.whole", "taskqueue.store.batches",
                  "taskqueue.store.analytics", "taskqueue.maintenance.signals",
                  "taskqueue.config.settings", "taskqueue.config.model", "tomllib",
                  "taskqueue.store.migrate", "taskqueue.store.work_models", "psycopg_pool")


@pytest.mark.parametrize("line", [["ls", "--limit", "1"], ["show", "{id}"],
                                  ["approve", "{id}", "--by", "ada"]])
def test_the_commands_a_person_runs_most_load_only_their_part(dsn: str, line: list[str]
                                                              ) -> None:
    task_id = _parked_task(dsn)
    argv = [word.format(id=task_id) for word in line]
    env = {k: v for k, v in os.environ.items() if k != "SIGNOFF_CONFIG"}
    found = _loaded(
        "import json, sys\nfrom taskqueue.cli.main import main\n"
        f"code = main({argv!r})\n"
        "print()\nloaded = sorted(m for m in " + repr(NOT_FOR_A_READ)
        + " if m in sys.modules)\n"
        "print(json.dumps({'code': code, 'loaded': loaded}))", {**env, "DATABASE_URL": dsn})
    assert found == {"code": 0, "loaded": []}


def _parked_task(dsn: str) -> int:
    async def park() -> int:
        async with TaskQueue.connect(dsn) as queue:
            await queue.task_enqueue("lazy", {})
            task = await queue.task_claim("lazy", "w")
            assert task is not None
            await queue.task_park(task.id, "w", "Go?", claim=task.claim)
            return task.id

    return asyncio.run(park())


def test_a_built_in_command_loads_no_plugin_and_no_runtime(dsn: str) -> None:
    env = {**os.environ, "DATABASE_URL": dsn}
    found = _loaded(
        "import json, sys\nfrom taskqueue.cli.main import main\n"
        "code = main(['ls', '--limit', '1', '--json'])\n"
        "print()\nloaded = sorted(m for m in " + repr(HEAVY + OTHER_COMMANDS)
        + " if m in sys.modules)\n"
        "print(json.dumps({'code': code, 'loaded': loaded}))", env)
    assert found == {"code": 0, "loaded": []}


def test_each_module_command_is_listed_with_its_module() -> None:
    """MODULE_COMMANDS names each command its module adds, and the whole parser has them."""
    import argparse

    from taskqueue.cli.main import MODULE_COMMANDS, build_parser

    for command, module in MODULE_COMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"taskqueue.cli.{module}").add_parser(sub)
        assert list(sub.choices) == [command], module
    modules = {p.stem for p in (ROOT / "taskqueue" / "cli").glob("*.py")
               if "def add_parser(" in p.read_text()}
    assert modules == set(MODULE_COMMANDS.values())

    def commands(parser: argparse.ArgumentParser) -> list[str]:
        [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return list(sub.choices)

    whole = commands(build_parser(plugins=False))
    assert set(MODULE_COMMANDS) <= set(whole)
    for command in MODULE_COMMANDS:  # a parser for one command line has that command alone
        assert commands(build_parser(plugins=False, command=command)) == [command]


def test_each_built_in_group_is_listed_with_its_commands() -> None:
    """_GROUPS names the commands each function adds; a parser for one command line has
    that command's group alone, and parses the line as the whole parser does."""
    import argparse

    from taskqueue.cli.main import _GROUPS, MODULE_COMMANDS, build_parser

    for add, names in _GROUPS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        add(sub)
        assert tuple(sub.choices) == names, add.__name__
    [sub] = [a for a in build_parser(plugins=False)._actions
             if isinstance(a, argparse._SubParsersAction)]
    grouped = [name for names in _GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(set(sub.choices) - set(MODULE_COMMANDS))
    line = ["approve", "42", "--by", "ada", "--note", "ok"]
    alone = build_parser(plugins=False, command="approve")
    [sub] = [a for a in alone._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == list(_GROUPS[next(a for a, n in _GROUPS.items()
                                                  if "approve" in n)])
    assert vars(alone.parse_args(line)).keys() == vars(build_parser().parse_args(line)).keys()
    assert alone.parse_args(line).id == 42


def test_help_and_completion_still_list_the_plugins_commands() -> None:
    done = subprocess.run([sys.executable, "-m", "taskqueue", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    assert " web " in done.stdout and " briefing " in done.stdout
    assert " ask " in done.stdout and " mcp " in done.stdout and " embedded " in done.stdout
    done = subprocess.run([sys.executable, "-m", "taskqueue", "completion", "bash"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    assert "web" in done.stdout and "briefing" in done.stdout
    done = subprocess.run([sys.executable, "-m", "taskqueue", "web", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    assert "--listen" in done.stdout


def test_a_public_name_that_is_also_a_module_is_the_function() -> None:
    # `taskqueue.redact` is a submodule and `taskqueue.redact` the function: importing the
    # submodule first (as the store does) must not leave the module in the function's place.
    found = _loaded("import json\nimport taskqueue.queues.whole\n"
                    "from taskqueue import redact, secret_register\n"
                    "secret_register('hush-hush-42')\n"
                    "print(json.dumps(redact('a hush-hush-42 b')))")
    assert found == "a [redacted] b"


def test_the_three_lists_of_public_names_agree() -> None:
    # __init__.py names each public name three times: the imports mypy and import-linter
    # read, the table of lazy imports, and __all__. A name added to one must be in all.
    tree = ast.parse(Path(taskqueue.__file__).read_text("utf-8"))
    typed = {alias.asname or alias.name for node in ast.walk(tree)
             if isinstance(node, ast.If) for inner in node.body
             if isinstance(inner, ast.ImportFrom) for alias in inner.names}
    eager = {"redact"}
    lazy = taskqueue._EXPORTS
    assert typed == set(taskqueue.__all__) == set(lazy) | eager
    for name, (module, attribute) in lazy.items():
        assert getattr(importlib.import_module(module), attribute) is getattr(taskqueue, name)
