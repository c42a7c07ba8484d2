"""Folders only the embedded server's owner can enter: the data folder and the folder of
its Unix socket. The server trusts every local connection (no password), so whoever can
reach the socket is its superuser; these checks keep other local users out."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taskqueue.errors import DatabaseUnavailable

SOCKET_NAME = ".s.PGSQL.5432"
# A Unix socket's path must fit sun_path: 108 bytes with the closing NUL.
MAX_SOCKET_PATH = 107
# The socket folder is passed to postgres through pg_ctl's -o, which a shell splits: only
# paths made of these characters are passed as they are.
_SHELL_SAFE = re.compile(r"[A-Za-z0-9_./-]+")
SOCKET_PREFIX = "signoff-pg-"


@dataclass(frozen=True)
class Owner:
    """Who runs the server: us, or (when we are root) pgserver's system user `name`."""

    uid: int
    gid: int
    name: str | None = None

    @property
    def is_system_user(self) -> bool:
        return self.name is not None


def server_owner(system_user: str | None) -> Owner:
    """The user postgres runs as: ourselves, or `system_user` when we are root (postgres
    refuses to run as root)."""
    if system_user is None:
        return Owner(os.geteuid(), os.getegid())
    import pwd

    entry = pwd.getpwnam(system_user)
    return Owner(entry.pw_uid, entry.pw_gid, system_user)


def prepare_data_folder(folder: Path, owner: Owner) -> None:
    """Create the data folder 0700, or tighten ours to it. As root the server's own user
    must pass through to its pgdata, so the folder is root:pgserver 0710 (enter, not list),
    and every folder above it must already let that user pass: one that does not is
    refused, never opened."""
    if owner.is_system_user:
        check_reachable(folder, owner)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise DatabaseUnavailable(f"the data folder {folder} is not a folder")
    check_owned(folder)
    if owner.is_system_user:
        check_reachable(folder, owner)  # again: folders mkdir just made (under a umask)
        os.chown(folder, -1, owner.gid)
        folder.chmod(0o710)
    else:
        folder.chmod(0o700)


def check_owned(folder: Path) -> None:
    """DatabaseUnavailable when the data folder exists and belongs to another user."""
    try:
        uid = folder.lstat().st_uid
    except FileNotFoundError:
        return
    if uid != os.geteuid():
        raise DatabaseUnavailable(f"the data folder {folder} belongs to uid {uid}, "
                                  f"not to this user (uid {os.geteuid()})")


def check_reachable(folder: Path, owner: Owner) -> None:
    """DatabaseUnavailable naming the first folder above `folder` that the server's user
    cannot pass (no search permission for it), with what to do. Folders that do not exist
    yet are skipped: they are made with the usual umask."""
    for parent in reversed(folder.parents):
        try:
            info = parent.stat()
        except FileNotFoundError:
            return
        if not _can_pass(info, owner):
            raise DatabaseUnavailable(
                f"the embedded server's user {owner.name} cannot pass through {parent} "
                f"(mode {stat.S_IMODE(info.st_mode):04o}, uid {info.st_uid}): choose a "
                f"SIGNOFF_DATA_DIR outside it (the default is /var/lib/signoff), or let "
                f"others pass with `chmod o+x {parent}`")


def _can_pass(info: os.stat_result, owner: Owner) -> bool:
    if info.st_uid == owner.uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == owner.gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def socket_dir_for(pgdata: Path, owner: Owner) -> Path:
    """Where the server's socket goes: its data folder (0700, the server's own) when the
    path fits a socket and a shell; else a new folder under /tmp made 0700 atomically with
    an unguessable name, owned by the server's user."""
    path = str(pgdata)
    if (len(f"{path}/{SOCKET_NAME}".encode()) <= MAX_SOCKET_PATH
            and _SHELL_SAFE.fullmatch(path)):
        return pgdata
    base = "/tmp" if Path("/tmp").is_dir() else tempfile.gettempdir()
    folder = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX, dir=base))
    if owner.is_system_user:
        os.chown(folder, owner.uid, owner.gid)
    if (len(f"{folder}/{SOCKET_NAME}".encode()) > MAX_SOCKET_PATH
            or not _SHELL_SAFE.fullmatch(str(folder))):
        folder.rmdir()
        raise DatabaseUnavailable(f"no short private folder for the server's socket: {base} "
                                  "is too long a path")
    return folder


def check_private(socket_dir: Path, owner: Owner) -> None:
    """DatabaseUnavailable unless only the server's user may enter the socket's folder."""
    try:
        info = socket_dir.lstat()
    except OSError as exc:
        raise DatabaseUnavailable(f"the embedded server's socket folder {socket_dir}: "
                                  f"{exc.strerror}") from None
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode) and info.st_uid == owner.uid and not mode & 0o077:
        return
    kind = "a symlink" if stat.S_ISLNK(info.st_mode) else f"mode {mode:04o}, uid {info.st_uid}"
    raise DatabaseUnavailable(
        f"the embedded server's socket folder {socket_dir} is open to other users ({kind}); "
        "stop the server (`signoff embedded stop`) and start it again")


def remove_socket_dir(socket_dir: Path | None, pgdata: Path) -> None:
    """Remove a socket folder of ours once its server stopped (its data folder stays)."""
    if (socket_dir is not None and socket_dir != pgdata
            and socket_dir.name.startswith(SOCKET_PREFIX)):
        try:
            for leftover in socket_dir.iterdir():
                leftover.unlink()
            socket_dir.rmdir()
        except OSError:
            pass
