"""Every shell example in every README and docs page runs as written, or says why it cannot.

A shell example is a fenced block marked sh, bash, shell or console, or an indented (or
unmarked fenced) block whose lines start like a command (`signoff …`, `make …`, `$ …`). Each
one either runs here (bash, in a temporary folder, against a fresh test database through
DATABASE_URL, the virtualenv's `signoff` on PATH) and must succeed, or has a marker on the
line before it saying why not:

    <!-- not run: starts the service, which runs until stopped -->

A console block (`$ command` lines, each followed by its output) must also print that output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGS = {"sh", "bash", "shell", "console"}
MARKER = re.compile(r"^\s*<!--\s*not run:(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(```|~~~)\s*([\w-]*)")
# What a command line starts with: optional `$ `, optional VAR=value, then a known program.
COMMAND = re.compile(
    r"^(?:\$ )?(?:[A-Z_]+=\S*\s+)*(?:signoff|make|pytest|python3?|source|cp|sudo|sudoedit|"
    r"bash|git|pip|systemctl|\.venv/bin/\S+)(?:\s|$)")
SKIPPED_DIRS = {".git", ".venv", "node_modules", ".pytest_cache", ".mypy_cache", "build",
                "dist", "__pycache__"}
MIN_REASON_WORDS = 3
TIMEOUT = 120


@dataclass(frozen=True)
class Example:
    """One shell example: where it is, its text, and the marker's reason when it has one."""

    path: str
    line: int
    body: str
    console: bool
    reason: str | None

    @property
    def name(self) -> str:
        return f"{self.path}:{self.line}"


def doc_files(root: Path = ROOT) -> list[Path]:
    """Every README.md under the repository (not in tool or virtualenv folders), and docs/*.md."""
    readmes = [p for p in root.rglob("README.md")
               if not SKIPPED_DIRS.intersection(p.relative_to(root).parts[:-1])
               and not any(part.startswith(".") for part in p.relative_to(root).parts[:-1])]
    return sorted({*readmes, *(root / "docs").glob("*.md")})


def examples(text: str, path: str) -> list[Example]:
    """The shell examples of one markdown text."""
    lines = text.splitlines()
    found: list[Example] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = _fence_end(lines, i, fence.group(2))
            body = _dedent(lines[i + 1:end])
            lang = fence.group(3).lower()
            if lang in SHELL_LANGS or (not lang and _looks_like_commands(body)):
                found.append(_example(lines, i, body, path, lang))
            i = end + 1
        elif MARKER.match(lines[i]):  # a marker indented inside a list item is not code
            i += 1
        elif lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            body = _dedent(lines[i:end])
            if _looks_like_commands(body):
                found.append(_example(lines, i, body, path, ""))
            i = end
        else:
            i += 1
    return found


def _fence_end(lines: list[str], start: int, fence: str) -> int:
    for j in range(start + 1, len(lines)):
        if lines[j].strip().startswith(fence):
            return j
    return len(lines)


def _dedent(lines: list[str]) -> str:
    return textwrap.dedent("\n".join(lines)).strip("\n") + "\n"


def _looks_like_commands(body: str) -> bool:
    return any(COMMAND.match(line.strip()) for line in body.splitlines())


def _example(lines: list[str], start: int, body: str, path: str, lang: str) -> Example:
    before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
    marker = MARKER.match(before)
    console = lang == "console" or body.lstrip().startswith("$ ")
    return Example(path, start + 1, body, console, marker.group(1).strip() if marker else None)


def all_examples() -> list[Example]:
    return [example for file in doc_files() for example in
            examples(file.read_text("utf-8"), str(file.relative_to(ROOT)))]


EXAMPLES = all_examples()


def _environment(dsn: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SIGNOFF_", "TELEGRAM_")) and k != "DATABASE_URL"}
    bin_dir = str(Path(sys.executable).parent)  # the virtualenv's `signoff` and `python`
    return env | {"DATABASE_URL": dsn, "SIGNOFF_DATA_DIR": str(home / "data"),
                  "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)


def console_steps(body: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each `$ command` of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps and line.strip():
            steps[-1][1].append(line.rstrip())
    return steps


def _run(example: Example, cwd: Path, env: dict[str, str]) -> None:
    if not example.console:
        done = _bash(example.body, cwd, env)
        assert done.returncode == 0, (example.name, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (example.name, done.stderr)
        return
    for command, expected in console_steps(example.body):
        done = _bash(command, cwd, env)
        printed = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
        # stdout and stderr are separate pipes: compare the lines, not their interleaving.
        assert sorted(printed) == sorted(expected), (example.name, command, printed)


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_every_shell_example_runs_or_says_why_not(example: Example, tmp_path: Path,
                                                  request: pytest.FixtureRequest) -> None:
    if example.reason is not None:
        assert len(example.reason.split()) >= MIN_REASON_WORDS, (
            f"{example.name}: the 'not run' marker needs a reason, got {example.reason!r}")
        return
    dsn = request.getfixturevalue("dsn")  # a fresh database only for what runs
    _run(example, tmp_path, _environment(dsn, tmp_path))


def test_the_examples_are_found_in_every_readme_and_some_run() -> None:
    files = {e.path for e in EXAMPLES}
    for expected in ("README.md", "workloads/builds/README.md", "docs/cli.md",
                     "workloads/job_applications/README.md", "docs/deployment.md"):
        assert expected in files, expected
    assert len([e for e in EXAMPLES if e.reason is None]) >= 3


SAMPLE = """\
# A page

    signoff enqueue demo '{"a": 1}'

<!-- not run: -->

```sh
make run
```

<!-- not run: starts the service, which runs until stopped -->

    make run CONFIG=signoff.toml

```python
import os
```

    {"json": "not a command"}

```console
$ signoff ls
no tasks
```
"""


def test_the_extractor_finds_indented_and_fenced_blocks_and_their_markers() -> None:
    found = examples(SAMPLE, "sample.md")
    assert [(e.line, e.reason, e.console) for e in found] == [
        (3, None, False), (7, "", False), (13, "starts the service, which runs until stopped",
                                           False), (21, None, True)]
    assert found[0].body == "signoff enqueue demo '{\"a\": 1}'\n"
    assert console_steps(found[3].body) == [("signoff ls", ["no tasks"])]


def test_an_example_that_fails_as_written_is_caught(dsn: str, tmp_path: Path) -> None:
    [wrong] = examples("    signoff enqueue roblox_build '{\"repository\": \"/srv/git/game\"}'\n",
                       "sample.md")
    with pytest.raises(AssertionError, match="unrecognized arguments"):
        _run(wrong, tmp_path, _environment(dsn, tmp_path))
    [console] = examples("```console\n$ signoff enqueue demo\n2\n```\n", "sample.md")
    with pytest.raises(AssertionError):  # it prints 1 (and a warning), not 2
        _run(console, tmp_path, _environment(dsn, tmp_path))
