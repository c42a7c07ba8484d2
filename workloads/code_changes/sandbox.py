"""The sandbox the agent and the tests run in: bubblewrap's argv and the environment they get.

Inside (workloads/code_changes/README.md, "The sandbox"): the whole file system read-only;
an empty writable /tmp (the scratch folder, also $HOME); the task's worktree and its git
admin folder writable; the home folders, the config file, /etc/signoff, Signoff's data
folder, the workspace's other tasks and PostgreSQL's socket folders hidden; own PID, IPC,
UTS and user namespaces; a network namespace of its own given the outside by pasta
(network.py), none with `sandbox_network = false`, or the host's with `"host"`; only the
allow-listed environment.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from taskqueue import data_dir, kill_group
from workloads.code_changes.network import explain, pasta_argv
from workloads.code_changes.settings import CONFIG_ENV, SECRET_ENV, SECTION, CodeSettings

__all__ = ["ENV_ALLOWED", "HIDDEN", "SCRATCH", "agent_env", "refusal", "sandboxed"]

# Passed through when set (plus `sandbox_env`): what a command needs to find programs and
# print text. Everything else of the worker's environment stays out.
ENV_ALLOWED = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ",
               "USER", "LOGNAME")
SCRATCH = "/tmp"
# Hidden when present: home folders, Signoff's files, PostgreSQL's sockets and data.
HIDDEN = ("/root", "/home", "/etc/signoff", "/run/postgresql", "/var/run/postgresql",
          "/var/lib/postgresql", "/run/user", "/var/tmp", SCRATCH)
PROBE_TIMEOUT = 30.0


def agent_env(settings: CodeSettings, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of the worker's environment; in the sandbox HOME and TMPDIR
    are the scratch folder."""
    env = os.environ if env is None else env
    names = (*ENV_ALLOWED, *settings.sandbox_env)
    out = {k: env[k] for k in names if k in env and not SECRET_ENV.match(k)}
    if settings.sandbox:
        out.update(HOME=SCRATCH, TMPDIR=SCRATCH)
    elif "HOME" in env:
        out["HOME"] = env["HOME"]
    return out


@cache
def _probe(argv: tuple[str, ...]) -> str | None:
    """None when `argv` exits 0 here; else why not, in one line. It runs in a session of its
    own, killed whole afterwards: a failing pasta can leave a child behind, waiting."""
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, start_new_session=True)
        except OSError as exc:
            return str(exc.strerror or exc)
        try:
            code: int | None = proc.wait(PROBE_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            kill_group(proc.pid)
            proc.wait()
        if code == 0:
            return None
        err.seek(0)
        said = explain(err.read(64 * 1024).decode("utf-8", "replace"))
    return said or (f"exit {code}" if code is not None else
                    f"no answer within {PROBE_TIMEOUT:.0f} s")


def refusal(settings: CodeSettings) -> str | None:
    """One line saying why the capability cannot start, or None (sandbox off, or it runs)."""
    if not settings.sandbox:
        return None
    bwrap = settings.sandbox_bwrap
    if why := _probe((bwrap, "--ro-bind", "/", "/", "--unshare-all", "true")):
        return (f"{SECTION}.sandbox: bubblewrap ({bwrap}) cannot run here: {why}; "
                f"install it and allow user namespaces, or set sandbox = false to run the "
                f"agent with the worker's own rights")
    if settings.network != "own":
        return None
    # The whole stack, as a task runs it: pasta's namespace, bwrap's inside.
    if why := _probe((*pasta_argv(settings), bwrap, "--ro-bind", "/", "/", "--unshare-all",
                      "--share-net", "true")):
        return (f"{SECTION}.sandbox_network: pasta ({settings.sandbox_pasta}) cannot give "
                f"the sandbox a network of its own here: {why}; install passt, or set "
                f"sandbox_network = false (no network) or \"host\" (the host's network, "
                f"PostgreSQL's port and every local service included)")
    return None


def _existing(paths: Iterable[str | Path]) -> list[Path]:
    return list(dict.fromkeys(Path(p).resolve() for p in paths if Path(p).exists()))


def _git_dirs(worktree: Path) -> tuple[Path | None, Path | None]:
    """The worktree's admin folder (index, HEAD) and the repository it belongs to."""
    try:
        line = (worktree / ".git").read_text("utf-8").strip()
    except OSError:
        return None, None
    if not line.startswith("gitdir:"):
        return None, None
    admin = Path(line.split(":", 1)[1].strip())
    try:
        common = (admin / (admin / "commondir").read_text("utf-8").strip()).resolve()
    except OSError:
        common = admin.parent.parent
    return admin, common


def _hidden(settings: CodeSettings, env: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """Folders to cover with an empty tmpfs, and files to cover with /dev/null."""
    homes = [env.get("HOME", ""), os.path.expanduser("~")]
    folders = [*HIDDEN, *(h for h in homes if h and h != "/"), str(data_dir(env)),
               str(settings.workspace), *map(str, settings.sandbox_hide)]
    files = [env[CONFIG_ENV]] if env.get(CONFIG_ENV) else []
    found = _existing(folders)
    return ([p for p in found if p.is_dir() and p != Path("/")],
            [p for p in _existing(files) + [p for p in found if p.is_file()]])


def sandboxed(settings: CodeSettings, argv: list[str], *, worktree: Path, run_dir: Path,
              env: Mapping[str, str] | None = None) -> list[str]:
    """`argv` wrapped in bwrap (hidden paths first, then what the command needs shown
    again), itself in pasta's network namespace unless the network is off or the host's."""
    env = os.environ if env is None else env
    args = [settings.sandbox_bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-all", "--die-with-parent", "--new-session"]
    if settings.network != "none":
        args.append("--share-net")  # pasta's namespace, or with "host" the host's
    folders, files = _hidden(settings, env)
    for folder in folders:
        args += ["--tmpfs", str(folder)]
    for file in files:
        args += ["--ro-bind", "/dev/null", str(file)]
    admin, common = _git_dirs(worktree)
    for path in _existing([*settings.sandbox_read, run_dir, *([common] if common else [])]):
        args += ["--ro-bind", str(path), str(path)]
    for path in _existing([worktree, *([admin] if admin else [])]):
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(worktree.resolve()), "--", *argv]
    return [*pasta_argv(settings), *args] if settings.network == "own" else args
