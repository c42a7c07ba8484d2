"""Where `module:function` specs are imported from: the current directory (like uvicorn and
celery), or the folder `--app-dir` names."""

from __future__ import annotations

import argparse
import importlib
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
    _keep_our_packages(path)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


# Signoff's own top-level packages.
OWN_PACKAGES = ("taskqueue", "bot", "workloads")


def _keep_our_packages(path: Path) -> None:
    """A plain folder of DIR named like one of our packages (`workloads/`, where `signoff
    init --full` writes the example profile) must not hide that package. An editable
    install finds its packages after sys.path's folders, where such a folder reads as a
    namespace package; so each one is imported before DIR joins sys.path."""
    for name in OWN_PACKAGES:
        folder = path / name
        if name not in sys.modules and folder.is_dir() and not (folder / "__init__.py").exists():
            saved = sys.path[:]
            sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != path]
            try:
                importlib.import_module(name)
            finally:
                sys.path[:] = saved
