"""The command line's manners: --version, help for every command and option, an example
in every epilog, and shell completion generated from the parser."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from taskqueue.cli.main import build_parser
from taskqueue.cli.manners import subcommands
from taskqueue.store.states import Status

from .cli_helpers import OK, USAGE, Cli

COMMANDS = [words for words, _, _ in subcommands(build_parser())]


@pytest.fixture
def cli() -> Cli:
    return Cli("postgresql://unused")  # nothing here opens the database


def test_version_prints_the_installed_version(cli: Cli) -> None:
    done = cli.fast("--version")
    assert done.returncode == OK and done.stdout == f"signoff {version('signoff')}\n"


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_every_command_describes_itself_and_its_options(cli: Cli, words: tuple[str, ...]
                                                        ) -> None:
    [parser] = [p for w, p, _ in subcommands(build_parser()) if w == words]
    assert parser.description and parser.epilog and "example: signoff" in parser.epilog
    for action in parser._actions:
        assert action.help, f"{' '.join(words)}: {action.dest} has no help"
    done = cli.fast(*words, "--help")
    assert done.returncode == OK
    assert parser.description.split()[0] in done.stdout and "example: signoff" in done.stdout


def test_help_lists_the_valid_values(cli: Cli) -> None:
    assert all(s.value in " ".join(cli.fast("ls", "--help").stdout.split()) for s in Status)
    caps = " ".join(cli.fast("caps", "set", "--help").stdout.split())
    assert "none clears the cap" in caps
    assert "approve, skip and revise" in " ".join(cli.fast("revise", "--help").stdout.split())
    assert "pool, tick" not in caps  # modes are the file's, not caps set's


def test_caps_without_a_verb_names_the_verbs_not_a_field(cli: Cli) -> None:
    done = cli.fast("caps")
    assert done.returncode == USAGE
    assert "caps_command" not in done.stderr and "{set,ls}" in done.stderr


def _completion(shell: str) -> str:
    done = subprocess.run([sys.executable, "-m", "taskqueue", "completion", shell],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_bash_completion_is_valid_and_offers_the_commands(tmp_path: Path) -> None:
    script = tmp_path / "signoff.bash"
    script.write_text(_completion("bash"))
    subprocess.run(["bash", "-n", str(script)], check=True, timeout=60)
    probe = (f"source {script}; COMP_WORDS=(signoff en); COMP_CWORD=1; _shtab_signoff; "
             'echo "${COMPREPLY[@]}"; COMP_WORDS=(signoff caps ""); COMP_CWORD=2; '
             '_shtab_signoff; echo "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60,
                          check=True)
    first, second = done.stdout.splitlines()
    assert first.split() == ["enqueue"]
    assert sorted(second.split()) == ["ls", "set"]


def test_zsh_completion_is_produced() -> None:
    script = _completion("zsh")
    assert script.startswith("#compdef signoff") and "enqueue" in script
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n", "-c", script], check=True, timeout=60)


def test_completion_refuses_an_unknown_shell(cli: Cli) -> None:
    done = cli.fast("completion", "fish")
    assert done.returncode == USAGE and done.stdout == ""
