"""Runs Signoff in a subprocess where some installed packages look absent, as in a venv
installed without their extra: a sys.meta_path finder refuses them by top-level name."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCKER = """\
import sys

class _Absent:
    \"\"\"Finds the blocked packages nowhere, as if they were not installed.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Absent())
"""


def without(blocked: Sequence[str], body: str, *, env: Mapping[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `body` (Python) with the `blocked` top-level packages absent."""
    code = f"BLOCKED = {tuple(blocked)!r}\n{BLOCKER}\n{body}"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=dict(env or os.environ), check=False)


def signoff_without(blocked: Sequence[str], *args: str,
                    env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`signoff ARGS` with the `blocked` packages absent."""
    return without(blocked, "from taskqueue.cli.main import main\n"
                            f"sys.exit(main({list(args)!r}))", env=env)


def service_without(blocked: Sequence[str], *args: str,
                    env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` with the `blocked` packages absent."""
    return without(blocked, f"from bot.__main__ import main\nsys.exit(main({list(args)!r}))",
                   env=env)


def extra_line(what: str, extra: str) -> str:
    return f"signoff: {what} needs the {extra!r} extra: pip install 'signoff[{extra}]'"
