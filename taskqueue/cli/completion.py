"""`signoff completion bash|zsh`: the shell completion script, generated from the parser."""

from __future__ import annotations

import argparse
from typing import Any

SHELLS = ("bash", "zsh")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `completion` on the `signoff` command line."""
    p = sub.add_parser(
        "completion", help="print the shell completion script (bash or zsh)",
        description="Print a completion script for your shell. Install it once: bash: "
                    "signoff completion bash > ~/.local/share/bash-completion/completions/"
                    "signoff ; zsh: signoff completion zsh > \"${fpath[1]}/_signoff\" "
                    "(then start a new shell). It has no --json: what it prints is the "
                    "script itself.")
    p.add_argument("shell", choices=SHELLS, help="the shell: bash or zsh")
    p.set_defaults(func=run)


async def run(args: Any) -> int:
    """Print the script for the whole `signoff` parser (plugins' commands included)."""
    import shtab

    print(shtab.complete(args.root_parser, shell=args.shell), end="")
    return 0
