"""Where `module:function` specs are imported from: the current directory (like uvicorn and
celery), or the folder `--app-dir` names."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taskqueue.errors import BadInput


def add_app_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--app-dir", metavar="DIR", default=".",
                   help="import handlers and producers from DIR (default: the current folder)")


def use_app_dir(folder: str) -> None:
    """Put `folder` first on sys.path, so `mywork.greetings:send_greeting` is found there."""
    path = Path(folder).resolve()
    if not path.is_dir():
        raise BadInput(f"--app-dir {folder}: no such folder")
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
