"""Signoff installs like a library: the wheel, installed into a fresh venv outside the
repository, carries its migrations and templates and runs `signoff migrate` + `enqueue`.

Alone (no extra) it is the core: the queue, a worker and the CLI work, no channel's or
workload's library is installed, and each of those parts says in one line which extra it
needs. With `all` every part is there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.extras_helpers import extra_line
from tests.timing import WAIT

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# What the extras bring (top-level modules); the core venv has none of them.
EXTRAS_MODULES = ("aiohttp", "prometheus_client", "jinja2", "pypdfium2", "pygments",
                  "telegram", "playwright", "pypdf", "pyVmomi", "libvirt", "tornado")


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built once from a copy of this checkout."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    dist = tmp_path / "dist"
    # From a copy without build/: setuptools keeps files in build/lib that the tree no longer
    # has (a renamed .sql file would ship twice), as a fresh clone has none.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "node_modules"))
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", dist, source, cwd=tmp_path)
    [built] = dist.glob("signoff-*.whl")
    return built


def _venv(tmp_path: Path, requirement: str) -> Path:
    """A fresh venv with `requirement` installed (pip's cache spares the downloads)."""
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    _run(venv / "bin" / "pip", "install", "-q", requirement, cwd=tmp_path)
    return venv


def test_the_wheel_installs_and_migrates_a_fresh_database(tmp_path: Path, wheel: Path,
                                                          empty_dsn: str) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("taskqueue/store/migrations/0001_initial.sql",
                    "taskqueue/store/sql/claim.sql", "taskqueue/store/schema.sql",
                    "bot/telegram/migrations/0001_messages.sql",
                    "bot/telegram/templates/approval.html.j2",
                    "bot/web/migrations/0001_accounts.sql", "bot/web/schema.sql",
                    "bot/web/static/app.js",
                    "bot/web/templates/inbox.html", "bot/web/templates/requests/generic.html",
                    "workloads/job_applications/templates/cv.tex.j2",
                    "taskqueue/cli/starter/signoff.example.toml",
                    "taskqueue/cli/starter/signoff.toml",
                    "taskqueue/cli/starter/greetings.py.txt",
                    "taskqueue/cli/starter/profile.example.toml"):
        assert shipped in names, shipped
    venv = _venv(tmp_path, f"{wheel}[all]")
    env = {"PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "DATABASE_URL": empty_dsn,
           "HOME": str(tmp_path)}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert _run("signoff", "migrate", cwd=outside, env=env).stdout.startswith("applied 0001")
    assert _run("signoff", "enqueue", "demo", "--payload", "{}", cwd=outside,
                env=env).stdout == "1\n"
    _run("signoff", "init", "--full", "full", cwd=outside, env=env)
    assert (outside / "full" / "signoff.toml").read_text() == (
        ROOT / "signoff.example.toml").read_text()
    # What --full writes passes its own checks (the dry run loads and checks the config).
    _run("signoff", "produce", "job_applications", "--dry-run", "--config",
         "full/signoff.toml", cwd=outside, env=env)
    help_text = _run(venv / "bin" / "python", "-m", "bot", "--help", cwd=outside, env=env)
    assert "--config" in help_text.stdout
    # The extras' parts are all there.
    found = _run(venv / "bin" / "python", "-c", _FIND, *EXTRAS_MODULES, cwd=outside, env=env)
    assert json.loads(found.stdout) == list(EXTRAS_MODULES)


# Which of the named top-level modules are installed (located, not imported).
_FIND = ("import importlib.util, json, sys\n"
         "print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m)]))")

HANDLER = """\
from taskqueue import Decision, Done, Park


async def greet(task, ctx):
    if task.decision is Decision.APPROVED:
        return Done({"greeted": task.payload["name"]})
    return Park("Greet " + task.payload["name"] + "?")
"""


def test_the_core_wheel_alone_runs_the_queue_a_worker_and_the_cli(
        tmp_path: Path, wheel: Path, empty_dsn: str) -> None:
    venv = _venv(tmp_path, str(wheel))
    app = tmp_path / "app"
    app.mkdir()
    (app / "tiny.py").write_text(HANDLER)
    env = {"PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "DATABASE_URL": empty_dsn,
           "HOME": str(tmp_path)}
    found = _run(venv / "bin" / "python", "-c", _FIND, *EXTRAS_MODULES, cwd=app, env=env)
    assert json.loads(found.stdout) == []  # so nothing below can have imported one
    # 122 MB measured (26 MB an empty venv, 73 MB the embedded PostgreSQL); an extra's
    # library back in the core (Playwright alone is 167 MB) would exceed this bound.
    size_kb = int(_run("du", "-sk", venv, cwd=app).stdout.split()[0])
    assert size_kb < 160 * 1024, f"the core venv is {size_kb // 1024} MB"

    def signoff(*args: str) -> subprocess.CompletedProcess[str]:
        return _run("signoff", *args, cwd=app, env=env, timeout=120)

    assert signoff("migrate").stdout.startswith("applied 0001")
    assert signoff("enqueue", "greet", "--payload", '{"name": "Ada"}').stdout == "1\n"
    worker = subprocess.Popen(["signoff", "worker", "--capability", "greet", "--handler",
                               "tiny:greet", "--poll-interval", "0.5"], cwd=app, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_status(signoff, "needs_approval")
        listed = json.loads(signoff("ls", "--json").stdout)
        assert [(t["id"], t["status"]) for t in listed] == [(1, "needs_approval")]
        assert "Greet Ada?" in signoff("show", "1").stdout
        signoff("approve", "1", "--by", "ada")
        _wait_status(signoff, "succeeded")
        shown = json.loads(signoff("show", "1", "--json").stdout)
        assert shown["result"] == {"greeted": "Ada"}
    finally:
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=WAIT)
    assert worker.returncode == 0, err[-2000:]
    assert "Traceback" not in err


def _wait_status(signoff: object, status: str) -> None:
    assert callable(signoff)
    deadline = time.monotonic() + WAIT
    while json.loads(signoff("show", "1", "--json").stdout)["status"] != status:
        assert time.monotonic() < deadline, f"task 1 never became {status}"
        time.sleep(0.3)


def test_the_core_wheel_alone_names_the_extra_each_part_needs(
        tmp_path: Path, wheel: Path, empty_dsn: str) -> None:
    venv = _venv(tmp_path, str(wheel))
    env = {"PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "DATABASE_URL": empty_dsn,
           "HOME": str(tmp_path), "TELEGRAM_BOT_TOKEN": "123456:not-a-real-token",
           "TELEGRAM_CHAT_ID": "42", "TELEGRAM_ALLOWED_USER_IDS": "7"}
    worker = ("signoff", "worker", "--capability", "x", "--handler")
    for command, line in [
        (("signoff", "web"), extra_line("the web inbox", "web")),
        ((*worker, "workloads.vm_ops.handler:handle"), extra_line("the vm_ops workload", "vm")),
        ((*worker, "workloads.job_applications.handler:handle"),
         extra_line("the job_applications workload", "jobs")),
        ((*worker, "json:dumps", "--metrics-listen", "127.0.0.1:0"),
         extra_line("--metrics-listen (/healthz and /metrics)", "metrics")),
        ((str(venv / "bin" / "python"), "-m", "bot"),
         extra_line("the Telegram channel", "telegram")),
    ]:
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr.splitlines()[-1:] == [line], (command, done.stderr)
        assert "Traceback" not in done.stderr
    # `signoff --help` still lists every command, the plugins' among them, with no warning.
    done = _run("signoff", "--help", cwd=tmp_path, env=env)
    assert " web " in done.stdout and " briefing " in done.stdout and done.stderr == ""
