"""`signoff init [DIR]`: write a starter project (the README's first workload) or, with
--full, the documented example of every config key."""

from __future__ import annotations

import argparse
from importlib.resources import files
from pathlib import Path
from typing import Any

from taskqueue.cli.output import print_json, safe
from taskqueue.errors import BadInput

STARTER = files("taskqueue.cli") / "starter"
# What `init` writes, by path under DIR, from which packaged file.
FILES = {"signoff.toml": "signoff.toml", "mywork/greetings.py": "greetings.py.txt"}
# The full example names one more file, relative to itself: the example's fictional
# candidate profile (a copy of the one beside its workload; a test keeps them equal), so
# the config it writes passes its own checks in an empty folder, as it does in a checkout.
FULL = {"signoff.toml": "signoff.example.toml",
        "workloads/job_applications/profile.example.toml": "profile.example.toml"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `init` on the `signoff` command line."""
    p = sub.add_parser(
        "init", help="write a starter signoff.toml and handler module",
        description="Write a starter project into DIR: signoff.toml and mywork/greetings.py, "
                    "the README's first workload, ready to run. Existing files are left alone "
                    "unless --force.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR",
                   help="where to write (default: the current directory; created if missing)")
    p.add_argument("--full", action="store_true",
                   help="write the documented example of every config key as signoff.toml, "
                        "with the example profile it names, instead (no handler module)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument("--json", action="store_true",
                   help='print {"written": [PATH, ...]} instead of one line per file')
    p.set_defaults(func=run)


def packaged(name: str) -> str:
    """The text of one packaged starter file."""
    return (STARTER / name).read_text("utf-8")


async def run(args: Any) -> int:
    """Write the files; refuse (nothing written) if one exists and --force is not given."""
    root = Path(args.dir)
    plan = {root / path: packaged(source)
            for path, source in (FULL if args.full else FILES).items()}
    existing = [str(path) for path in plan if path.exists()]
    if existing and not args.force:
        raise BadInput(f"{', '.join(existing)} already "
                       f"{'exist' if len(existing) > 1 else 'exists'}: use --force to overwrite")
    for path, text in plan.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    if args.json:
        print_json({"written": [str(path) for path in plan]})
    else:
        print("\n".join(f"wrote {safe(str(path))}" for path in plan))
    return 0
