"""The command line's manners: --version, help for every command and option, an example
in every epilog, and shell completion generated from the parser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from taskqueue.cli.main import build_parser
from taskqueue.cli.manners import subcommands
from taskqueue.store.states import Status

from ..cli_helpers import OK, USAGE, Cli, closed_port

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


def _complete_in_bash(script: Path, words: list[str], env: dict[str, str]) -> list[str]:
    """What bash offers for the last of `words`, with this venv's `signoff` on PATH."""
    line = " ".join(f"'{w}'" for w in words)
    probe = (f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
             '_shtab_signoff; echo "${COMPREPLY[@]}"')
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60,
                          check=True, env=env | {"PATH": path})
    return done.stdout.split()


def test_completion_offers_statuses_and_the_databases_capabilities(
        tmp_path: Path, dsn: str) -> None:
    script = tmp_path / "signoff.bash"
    script.write_text(_completion("bash"))
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {"DATABASE_URL": dsn}
    assert _complete_in_bash(script, ["signoff", "ls", "--status", "needs"], env) == [
        "needs_approval"]
    assert sorted(_complete_in_bash(script, ["signoff", "ls", "--status", ""], env)) == sorted(
        s.value for s in Status)
    subprocess.run([sys.executable, "-m", "taskqueue", "enqueue", "greet"], env=env,
                   check=True, capture_output=True, timeout=60)
    subprocess.run([sys.executable, "-m", "taskqueue", "caps", "set", "vm_ops",
                    "--max-running", "1"], env=env, check=True, capture_output=True, timeout=60)
    assert _complete_in_bash(script, ["signoff", "enqueue", ""], env) == ["greet", "vm_ops"]
    assert _complete_in_bash(script, ["signoff", "ls", "--capability", "v"], env) == ["vm_ops"]
    assert _complete_in_bash(script, ["signoff", "caps", "set", "g"], env) == ["greet"]


def test_completion_without_a_database_offers_no_capabilities_and_no_error(
        tmp_path: Path) -> None:
    script = tmp_path / "signoff.bash"
    script.write_text(_completion("bash"))
    env = os.environ | {"DATABASE_URL": f"postgresql://postgres@127.0.0.1:{closed_port()}/x"}
    assert _complete_in_bash(script, ["signoff", "enqueue", ""], env) == []
    assert _complete_in_bash(script, ["signoff", "ls", "--status", "pe"], env) == ["pending"]
    done = subprocess.run([sys.executable, "-m", "taskqueue", "completion", "bash", "--values",
                           "capabilities"], env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
