"""The agent's sandbox (bubblewrap, in pasta's network namespace): a hostile stand-in agent
tries to read a planted key, read the config, write outside its worktree, reach the database
and local services and push by itself; the well-behaved agents of the other tests run in the
same sandbox. Plus the refusal to start where bubblewrap or pasta cannot run, and no process
left behind after a sandboxed timeout."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import psycopg
import pytest

from taskqueue import CapabilityRun, ConfigError, TaskQueue, load_config
from tests.taskqueue.worker_helpers import running_pool, wait_for, wait_status
from workloads.code_changes.handler import CAPABILITY, check_config, make_handler
from workloads.code_changes.marked import MARK_ENV
from workloads.code_changes.sandbox import HIDDEN, agent_env, sandboxed
from workloads.code_changes.settings import CodeSettings
from workloads.code_changes.workspace import Workspace

from .conftest import Remote, payload, sh, with_agent
from .fake_github import TOKEN, FakeGitHub

ROOT = Path(__file__).resolve().parents[3]

# Tries everything it must not manage, prints one REPORT line (JSON), then edits like a
# good agent so the task still parks. TARGETS is filled in by the test.
HOSTILE = """
import json, os, pathlib, socket, subprocess, sys
T = json.loads(TARGETS)
out = {}

def attempt(name, fn):
    try:
        out[name] = ["ok", str(fn())[:200]]
    except Exception as exc:
        out[name] = ["refused", f"{type(exc).__name__}: {exc}"[:200]]

def connect(family, address):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(address)
    return "connected"

def banner(address):
    with socket.create_connection(address, timeout=5) as s:
        return s.recv(200).decode()

def default_route():
    # Read, never used: no packet leaves this machine in the tests.
    rows = pathlib.Path("/proc/net/route").read_text().splitlines()[1:]
    return any(r.split()[1] == "00000000" and r.split()[0] != "lo" for r in rows)

def push(where, ref):
    done = subprocess.run(["git", "push", where, "HEAD:refs/heads/" + ref],
                          capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise RuntimeError(done.stderr.strip()[-150:])
    return "pushed"

attempt("read_key", lambda: pathlib.Path(T["key"]).read_text())
attempt("read_key_via_home", lambda: (pathlib.Path.home() / ".ssh" / "id_ed25519").read_text())
attempt("read_config", lambda: pathlib.Path(T["config"]).read_text())
attempt("read_worker_environ", lambda: pathlib.Path(T["worker_environ"]).read_bytes())
attempt("write_outside", lambda: pathlib.Path(T["outside"]).write_text("escaped"))
attempt("write_tmp_outside", lambda: pathlib.Path(T["tmp_outside"]).write_text("escaped"))
attempt("write_mirror", lambda: (pathlib.Path(T["mirror"]) / "HEAD").write_text("x"))
attempt("db_unix", lambda: connect(socket.AF_UNIX, T["db_socket"]))
attempt("db_tcp", lambda: connect(socket.AF_INET, ("127.0.0.1", T["db_port"])))
attempt("host_http", lambda: connect(socket.AF_INET, ("127.0.0.1", T["http_port"])))
attempt("model_port", lambda: banner(("127.0.0.1", T["model_port"])))
out["default_route"] = default_route()
attempt("push_origin", lambda: push("origin", "sneaky"))
attempt("push_remote_path", lambda: push(T["remote"], "sneaky2"))
out["env"] = dict(os.environ)
out["home"] = os.environ.get("HOME")
print("REPORT " + json.dumps(out), flush=True)
pathlib.Path("CHANGES.md").write_text("hostile but still editing\\n")
"""

DB_SOCKET = "/run/postgresql/.s.PGSQL.5432"


@dataclass(frozen=True)
class Planted:
    """Secrets and a target outside /tmp (which the sandbox hides anyway), so only the
    home, config and read-only rules can be what keeps them safe."""

    home: Path
    key: Path
    config: Path
    outside: Path


def _host_only_folder() -> Path:
    """Where the planted secrets go: a folder the sandbox shows read-only from any checkout
    location. Not under /tmp or /var/tmp (inside the sandbox those are its own empty scratch
    folders, so "write outside" would land there harmlessly and prove nothing), nor under a
    home folder or the checkout (a checkout under a home is hidden behind a tmpfs, with the
    same effect). /run/lock is writable by every user on Debian and shown read-only."""
    hidden = [Path(p) for p in (*HIDDEN, os.path.expanduser("~"))]
    for folder in (Path("/run/lock"), Path("/var/cache")):
        visible = not any(folder.is_relative_to(h) for h in hidden)
        if visible and folder.is_dir() and os.access(folder, os.W_OK | os.X_OK):
            return folder
    raise RuntimeError("no folder outside the home folders and /tmp is writable here")


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch, dsn: str) -> Iterator[Planted]:
    base = _host_only_folder() / f"sandbox-test-{uuid.uuid4().hex[:8]}"
    home, etc = base / "home", base / "etc"
    (home / ".ssh").mkdir(parents=True)
    etc.mkdir()
    key = home / ".ssh" / "id_ed25519"
    key.write_text("PLANTED-PRIVATE-KEY\n")
    config = etc / "signoff.toml"
    config.write_text('# SECRET-IN-CONFIG\n[workloads.code_changes]\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    monkeypatch.setenv("DATABASE_URL", dsn)
    monkeypatch.setenv("SIGNOFF_GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:telegram-secret")
    monkeypatch.setenv("MODEL_API_KEY", "model-key-for-the-agent")
    try:
        yield Planted(home, key, config, base / "outside.txt")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True)
class Model:
    """A stand-in for a model's API on the host's loopback: greets with `banner`."""

    port: int
    banner: str


@pytest.fixture
async def model() -> AsyncIterator[Model]:
    banner = f"MODEL-{uuid.uuid4().hex}"

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(banner.encode())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    try:
        yield Model(server.sockets[0].getsockname()[1], banner)
    finally:
        server.close()
        await server.wait_closed()


def _hostile(settings: CodeSettings, folder: Path, planted: Planted, remote: Remote,
             github: FakeGitHub, model: Model, network: bool | str) -> CodeSettings:
    ws = Workspace(settings.workspace)
    targets = {
        "key": str(planted.key), "config": str(planted.config), "outside": str(planted.outside),
        "tmp_outside": str(folder / "tmp-outside.txt"),
        "worker_environ": f"/proc/{os.getpid()}/environ",
        "mirror": str(ws.mirror(str(remote.path))), "db_socket": DB_SOCKET,
        "db_port": 5432, "http_port": int(github.base_url.rsplit(":", 1)[1]),
        "model_port": model.port, "remote": str(remote.path)}
    source = f"TARGETS = {json.dumps(json.dumps(targets))}\n{HOSTILE}"
    # The remote is shown (read-only) so the push attempt reaches a real repository.
    return with_agent(settings, folder / "agents", "hostile", source, test_command=(),
                      sandbox_network=network, sandbox_env=("MODEL_API_KEY",),
                      sandbox_host_ports=(model.port,) if network is True else (),
                      sandbox_read=(*settings.sandbox_read, remote.path))


def _report(settings: CodeSettings, task_id: int) -> dict:
    log = (settings.workspace / "runs" / f"task-{task_id}" / "agent-1.log").read_text()
    line = next(x for x in log.splitlines() if x.startswith("REPORT "))
    return dict(json.loads(line.removeprefix("REPORT ")))


# What the agent reaches over TCP on the host's loopback, by `sandbox_network`: PostgreSQL's
# port, a local service (the stand-in GitHub) and the model's port (in sandbox_host_ports
# when the network is the sandbox's own). True also gives it a default route out.
REACHES = {True: {"db_tcp": "refused", "host_http": "refused", "model_port": "ok"},
           False: {"db_tcp": "refused", "host_http": "refused", "model_port": "refused"},
           "host": {"db_tcp": "ok", "host_http": "ok", "model_port": "ok"}}


@pytest.mark.parametrize("network", [True, False, "host"],
                         ids=["network-own", "network-off", "network-host"])
async def test_a_hostile_agent_reaches_none_of_the_workers_secrets(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, github: FakeGitHub,
        model: Model, planted: Planted, tmp_path: Path, network: bool | str) -> None:
    assert Path(DB_SOCKET).exists()  # the database is there to be reached, on the host
    with psycopg.connect(os.environ["DATABASE_URL"]):
        pass
    settings = _hostile(settings, tmp_path, planted, remote, github, model, network)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        parked = await wait_status(queue, task_id, "needs_approval", timeout=30)
    got = _report(settings, task_id)
    refused = {k for k, v in got.items() if isinstance(v, list) and v[0] == "refused"}
    must = {"read_key", "read_key_via_home", "read_config", "read_worker_environ",
            "write_outside", "write_mirror", "db_unix", "push_origin", "push_remote_path"}
    assert must <= refused, got
    assert got["read_config"][1].count("SECRET") == 0 and "Read-only" in got["write_outside"][1]
    # Writes to /tmp land in the sandbox's own scratch folder, never on the host.
    assert got["write_tmp_outside"][0] == "ok" and not (tmp_path / "tmp-outside.txt").exists()
    assert not planted.outside.exists() and remote.pushes() == []
    assert remote.branch_sha("sneaky") is None and remote.branch_sha("sneaky2") is None
    # Only the allow-list: no database URL, no tokens; the named model key does pass.
    env = got["env"]
    assert not {"DATABASE_URL", "SIGNOFF_GITHUB_TOKEN", "TELEGRAM_BOT_TOKEN",
                "SIGNOFF_CONFIG"} & set(env)
    assert TOKEN not in json.dumps(env) and env["MODEL_API_KEY"] == "model-key-for-the-agent"
    assert got["home"] == "/tmp" and env[MARK_ENV]
    # The network: its own (pasta) reaches the model's named port and nothing else on the
    # host's loopback, PostgreSQL's port included; "host" reaches it all (the documented
    # leak); off reaches nothing.
    assert {k: got[k][0] for k in REACHES[network]} == REACHES[network], got
    if got["model_port"][0] == "ok":  # the host's own server answered, not an empty accept
        assert got["model_port"][1] == model.banner, got
    assert got["default_route"] is (network is not False)
    # The edit still became the parked commit, and only the edit.
    req = parked.approval.request if parked.approval else {}
    assert [f["path"] for f in req["files"]] == ["CHANGES.md"]
    mirror = Workspace(settings.workspace).mirror(str(remote.path))
    assert sh("show", f"{req['commit']}:CHANGES.md", cwd=mirror) == "hostile but still editing"


async def test_without_the_sandbox_the_same_agent_reads_the_key_and_pushes(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, github: FakeGitHub,
        model: Model, planted: Planted, tmp_path: Path) -> None:
    """What `sandbox = false` means (and that the test above can fail): only the
    environment's allow-list remains."""
    settings = replace(_hostile(settings, tmp_path, planted, remote, github, model, True),
                       sandbox=False)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    log = settings.workspace / "runs" / f"task-{task_id}" / "agent-1.log"
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        # It also broke the mirror's HEAD, so the task will not get as far as parking.
        await wait_for(lambda: _true(log.exists() and "REPORT " in log.read_text()), 30)
    got = _report(settings, task_id)
    for name in ("read_key", "read_key_via_home", "read_config", "write_outside",
                 "write_mirror", "db_unix", "db_tcp", "host_http", "model_port",
                 "push_remote_path"):
        assert got[name][0] == "ok", (name, got[name])
    assert "PLANTED-PRIVATE-KEY" in got["read_key"][1] and planted.outside.exists()
    assert remote.branch_sha("sneaky2") is not None  # it pushed by itself
    assert got["push_origin"][0] == "refused"  # the push URL still goes nowhere
    assert "DATABASE_URL" not in got["env"] and got["home"] == str(planted.home)


HANGS = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print("thinking...", flush=True)
time.sleep(300)
"""


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone already
        return b""


def _marked(mark: str) -> list[int]:
    needle = f"{MARK_ENV}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_a_sandboxed_agent_that_times_out_leaves_no_process_behind(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, tmp_path: Path) -> None:
    settings = with_agent(settings, tmp_path / "agents", "hangs", HANGS, agent_timeout=2)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    mark = Workspace(settings.workspace).mark(task_id)
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        await wait_for(lambda: _true(bool(_marked(mark))), timeout=20)  # it runs
        task = await wait_for(lambda: _failed_once(queue, task_id), timeout=30)
    assert "the agent timed out after 2 s" in (task.last_error or "")
    await wait_for(lambda: _true(not _marked(mark)), timeout=20)


# A stand-in worker: runs one command through run_marked until it is killed.
PARENT = """
import asyncio, json, sys
from pathlib import Path
from workloads.code_changes.marked import run_marked
argv, cwd, log, env, mark = json.loads(sys.argv[1])
asyncio.run(run_marked(argv, cwd=Path(cwd), log=Path(log), timeout=300, env=env, mark=mark))
"""


async def test_kill_9_of_the_worker_takes_the_whole_sandbox_with_it(
        settings: CodeSettings, tmp_path: Path) -> None:
    worktree, runs = tmp_path / "wt", tmp_path / "runs"
    worktree.mkdir()
    runs.mkdir()
    agent = tmp_path / "agents" / "hangs.py"
    agent.write_text(HANGS)
    argv = sandboxed(settings, [sys.executable, str(agent)], worktree=worktree, run_dir=runs)
    mark = f"kill9-{uuid.uuid4().hex}"
    args = json.dumps([argv, str(worktree), str(runs / "a.log"), agent_env(settings), mark])
    parent = subprocess.Popen([sys.executable, "-c", PARENT, args], cwd=ROOT)
    try:
        # Once the agent's child runs, pasta, both bwraps, the agent and the child all do,
        # each with its death signal set. (Counting 3 marked processes could catch pasta's
        # child before bwrap set its own, under load: a worker killed in those milliseconds
        # leaves the sandbox to workspace.kill_marked, run before the task's next attempt.)
        await wait_for(lambda: _true(any(b"time.sleep(300)" in _cmdline(p)
                                         for p in _marked(mark))), timeout=20)
        assert len(_marked(mark)) >= 3  # pasta or bwrap, the agent, its child
        parent.kill()
        assert await asyncio.to_thread(parent.wait, 10) == -9
        await wait_for(lambda: _true(not _marked(mark)), timeout=20)
    finally:
        parent.kill()
        parent.wait(10)


async def _true(value: bool) -> bool:
    return value


async def _failed_once(queue: TaskQueue, task_id: int):  # type: ignore[no-untyped-def]
    task = await queue.task_get(task_id)
    return task if task.last_error else None


def _config(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text('[capabilities.code_changes]\n'
                    'handler = "workloads.code_changes.handler:handle"\nmode = "external"\n\n'
                    f'[workloads.code_changes]\nworkspace = "{tmp_path / "ws"}"\n{extra}\n')
    return path


def test_the_capability_refuses_to_start_where_bubblewrap_cannot_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_config(tmp_path, 'sandbox_bwrap = "/bin/false"'), env={})
    line = str(err.value)
    assert "\n" not in line and "workloads.code_changes.sandbox: bubblewrap (/bin/false) " \
        "cannot run here: exit 1; install it and allow user namespaces, or set " \
        "sandbox = false" in line
    # Said explicitly, the capability starts without it; a working bwrap starts as before.
    check_config(load_config(_config(tmp_path, 'sandbox = false\nsandbox_bwrap = "/bin/false"'),
                             env={}))
    check_config(load_config(_config(tmp_path, f'sandbox_bwrap = "{shutil.which("bwrap")}"'),
                             env={}))
    with pytest.raises(ConfigError, match="no-such-bwrap"):
        load_config(_config(tmp_path, 'sandbox_bwrap = "/no-such-bwrap"'), env={})


@pytest.mark.parametrize(("broken", "said", "explicit"), [
    ({"sandbox_bwrap": "/bin/false"}, "bubblewrap (/bin/false) cannot run here",
     {"sandbox": False}),
    ({"sandbox_pasta": "/bin/false"}, "pasta (/bin/false) cannot give the sandbox a network",
     {"sandbox_network": False}),
], ids=["bwrap", "pasta"])
async def test_a_task_never_runs_its_agent_unsandboxed_when_the_sandbox_fails(
        queue: TaskQueue, remote: Remote, settings: CodeSettings, broken: dict,
        said: str, explicit: dict) -> None:
    settings = replace(settings, **broken)
    task_id = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        task = await wait_for(lambda: _failed_once(queue, task_id), timeout=20)
    assert said in (task.last_error or "")
    assert not (settings.workspace / "runs" / f"task-{task_id}").exists()  # nothing ran
    settings = replace(settings, **explicit)  # said explicitly: it runs, without that part
    again = (await queue.task_enqueue(CAPABILITY, payload(remote))).id
    async with running_pool(queue, CapabilityRun(CAPABILITY, make_handler(settings), 30)):
        await wait_status(queue, again, "needs_approval", timeout=30)


def test_the_capability_refuses_to_start_where_pasta_cannot_run(tmp_path: Path) -> None:
    """With the network on, no own network namespace means no start: not a silent fall-back
    to the host's network (which shows PostgreSQL's port)."""
    with pytest.raises(ConfigError) as err:
        load_config(_config(tmp_path, 'sandbox_pasta = "/bin/false"'), env={})
    assert str(err.value) == (
        "workloads.code_changes.sandbox_network: pasta (/bin/false) cannot give the sandbox a "
        "network of its own here: exit 1; install passt, or set sandbox_network = false (no "
        "network) or \"host\" (the host's network, PostgreSQL's port and every local service "
        "included)")
    # Said explicitly, it starts: no network, or the host's; a working pasta starts as before.
    for network in ("false", '"host"'):
        check_config(load_config(_config(
            tmp_path, f'sandbox_network = {network}\nsandbox_pasta = "/bin/false"'), env={}))
    check_config(load_config(_config(tmp_path, f'sandbox_pasta = "{shutil.which("pasta")}"'),
                             env={}))


def test_pasta_on_a_machine_without_a_default_route_is_refused_by_name(tmp_path: Path) -> None:
    """pasta copies the host's outside interface; where there is none it will not start. A
    stand-in runs the real pasta in an empty network namespace (no route, no interface)."""
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode:
        pytest.skip("unshare -rn (a user and network namespace) is not allowed here")
    wrapper = tmp_path / "pasta-no-route"
    wrapper.write_text(f'#!/bin/sh\nexec unshare -rn {shutil.which("pasta")} "$@"\n')
    wrapper.chmod(0o755)
    with pytest.raises(ConfigError) as err:
        load_config(_config(tmp_path, f'sandbox_pasta = "{wrapper}"'), env={})
    assert "cannot give the sandbox a network of its own here: the machine has no default " \
        "route to the outside (pasta: External interface not usable); install passt, or set " \
        "sandbox_network = false" in str(err.value) and "\n" not in str(err.value)
