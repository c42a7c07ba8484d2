"""No secret reaches what the service or the CLI prints, a task's stored error, or a chat
message: `python -m bot` against the fake Bot API at INFO and at DEBUG, with a handler that
quotes every secret, a refused vCenter login, and an unreachable database whose URL holds a
password; /healthz and /metrics are read too. Each run also proves it could have caught a
leak (requests were made, the leaky lines were written)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from taskqueue import MASK, Status, TaskQueue
from tests.bot.fake_telegram import FakeTelegram, user
from tests.taskqueue.cli_helpers import closed_port
from tests.taskqueue.worker_helpers import ROOT, wait_for, wait_status
from tests.workloads.vm_ops.stand_ins import build_vcsim, running_vcsim

pytestmark = pytest.mark.slow

TOKEN = "7777777:AAsecret-bot-token-Xq9"
SECRETS = {
    "TELEGRAM_BOT_TOKEN": TOKEN,
    "TELEGRAM_WEBHOOK_SECRET": "whsecret-abc_123-zz",
    "SIGNOFF_VCENTER_PASSWORD": "wrong-vc-Pa55word",
    "SIGNOFF_ROBLOX_API_KEY": "rbx-key-0123456789abcdef",
    "SIGNOFF_GITHUB_TOKEN": "ghp_secretGitHubToken42",
    "SIGNOFF_MODEL_API_KEY": "sk-model-key-5555",
    "SIGNOFF_ASC_KEY_ID": "ASCKEYID9876",
    "SIGNOFF_ASC_ISSUER_ID": "asc-issuer-6c1f-44aa",
}
DB_PASSWORD = "db-Pa55-in-the-url"
SIGNOFF = str(Path(sys.executable).with_name("signoff"))
ALICE = user(11, "Alice")


def url_with_password(dsn: str, port: int | None = None) -> str:
    info = conninfo_to_dict(dsn)
    return (f"postgresql://{info.get('user', 'postgres')}:{DB_PASSWORD}@127.0.0.1:"
            f"{port or info.get('port', 5432)}/{info['dbname']}")


def environment(database_url: str) -> dict[str, str]:
    # A whole Telegram setting (token, chat, deciders), so the service's checks pass and it gets as
    # far as the database.
    env = {**os.environ, **SECRETS, "DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1",
           "TELEGRAM_CHAT_ID": "42", "TELEGRAM_ALLOWED_USER_IDS": "7"}
    env.pop("SIGNOFF_CONFIG", None)
    return env


def config(folder: Path, fake: FakeTelegram, vcenter_url: str) -> Path:
    path = folder / "signoff.toml"
    path.write_text(f"""\
[worker]
poll_interval_seconds = 0.2
grace_seconds = 1

[capabilities.leaky]
handler = "tests.bot.leaky_handlers:leaky"
mode = "pool"

[capabilities.vm_ops]
handler = "workloads.vm_ops.handler:handle"
mode = "pool"
lease_seconds = 30

[workloads.vm_ops]
driver = "vsphere"
vcenter_url = "{vcenter_url}"
user = "alice"
datacenter = "DC0"
verify_tls = false
allow_names = ["DC0_H0_VM1"]

[http]
listen = "127.0.0.1:0"

[telegram]
chat_id = -100123
allowed_user_ids = [{ALICE["id"]}]
api_base_url = "{fake.url}"
digest = false
""", "utf-8")
    return path


def leaks(text: str) -> dict[str, int]:
    """How often each secret occurs in `text` (the test wants none)."""
    found = {name: text.count(value) for name, value in SECRETS.items()}
    found["DATABASE_URL password"] = text.count(DB_PASSWORD)
    return {name: n for name, n in found.items() if n}


def stored_text(dsn: str) -> str:
    """Every task row and event (errors, tracebacks) and every delivery error, as text; not
    the park, whose question this test wrote itself."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = [r[0] for r in conn.execute("SELECT row_to_json(t)::text FROM tasks t")]
        rows += [r[0] for r in conn.execute(
            "SELECT row_to_json(e)::text FROM task_events e WHERE kind <> 'parked'")]
        rows += [str(r[0]) for r in conn.execute(
            "SELECT last_error FROM notification_deliveries")]
    return "\n".join(rows)


@pytest.fixture(scope="module")
def vcsim_binary() -> Path:
    return build_vcsim()


@pytest.mark.parametrize("verbose", [False, True], ids=["INFO", "DEBUG"])
async def test_the_service_prints_and_stores_no_secret(
        verbose: bool, dsn: str, queue: TaskQueue, vcsim_binary: Path, tmp_path: Path) -> None:
    fake = FakeTelegram(token=TOKEN, long_poll=0.2)
    await fake.start()
    out = tmp_path / "service.log"
    try:
        with running_vcsim(vcsim_binary, tmp_path) as sim, out.open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "--config", str(config(tmp_path, fake, sim.url)),
                 *(["-v"] if verbose else [])],
                cwd=ROOT, env=environment(url_with_password(dsn)), stdout=log,
                stderr=subprocess.STDOUT)
            try:
                await wait_for(lambda: _logged(out, "service started"), timeout=60)
                leaky = await queue.task_enqueue("leaky", {}, max_attempts=1)
                vm = await queue.task_enqueue("vm_ops", {"vm": "DC0_H0_VM1",
                                                         "action": "power_off"}, max_attempts=1)
                await queue.task_enqueue("asks", {})
                asking = await queue.task_claim("asks", "w1")
                assert asking is not None
                await queue.task_park(asking.id, "w1", "Publish with key "
                                      f"{SECRETS['SIGNOFF_ROBLOX_API_KEY']}?", claim=asking.claim)
                failed = await wait_status(queue, leaky.id, Status.FAILED, timeout=30)
                vm_task = await wait_status(queue, vm.id, Status.FAILED, Status.PENDING,
                                            timeout=60)
                await fake.wait_for(lambda: fake.calls_to("sendMessage"), timeout=30)
                await fake.wait_for(lambda: len(fake.calls_to("getUpdates")) >= 3, timeout=30)
                served = _SERVING.search(out.read_text("utf-8", "replace"))
                assert served, "the service says where it serves /healthz"
                scraped = await asyncio.to_thread(_scrape, int(served[1]))
            finally:
                proc.send_signal(signal.SIGTERM)
                code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 60)
    finally:
        await fake.stop()
    printed = out.read_text("utf-8", "replace")
    assert code == 0, printed[-3000:]
    # The runs could have leaked: requests were made, the handler logged and raised them.
    assert len(fake.calls_to("getUpdates")) >= 3 and "publishing with" in printed
    assert printed.count(MASK) >= 2 and MASK in (failed.last_error or "")
    assert "login refused" in (vm_task.last_error or ""), vm_task.last_error
    if verbose:
        assert " DEBUG " in printed
    sent = " ".join(str(c.params) for c in fake.calls_to("sendMessage"))
    assert "Publish with key" in sent
    assert leaks(printed) == {} and leaks(stored_text(dsn)) == {} and leaks(sent) == {}
    # /healthz (checks and their errors) and /metrics (labels and help) name none either.
    assert '"checks"' in scraped and "signoff_tasks" in scraped and leaks(scraped) == {}


_SERVING = re.compile(r"http: serving /healthz and /metrics on 127\.0\.0\.1:(\d+)")


def _scrape(port: int) -> str:
    """/healthz and /metrics, whatever their status (a 503 body counts too)."""
    bodies = []
    for path in ("/healthz", "/metrics"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                bodies.append(r.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as exc:
            bodies.append(exc.read().decode("utf-8", "replace"))
    return "\n".join(bodies)


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text("utf-8", "replace")


@pytest.mark.parametrize("url_port", ["closed", "notaport"])
@pytest.mark.parametrize("command", [[SIGNOFF, "ls"], [SIGNOFF, "-vv", "signals", "--json"],
                                     [sys.executable, "-m", "bot"],
                                     [sys.executable, "-m", "bot", "-v"]], ids=" ".join)
def test_an_unreachable_database_is_one_line_without_its_password(
        command: list[str], url_port: str, dsn: str) -> None:
    url = url_with_password(dsn, closed_port())
    if url_port == "notaport":
        url = url.replace(str(conninfo_to_dict(url)["port"]), "notaport")
    done = subprocess.run(command, cwd=ROOT, env=environment(url), capture_output=True,
                          text=True, timeout=60, check=False)
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed
    assert "Traceback" not in printed and leaks(printed) == {}, printed
    assert "database" in done.stderr.strip().splitlines()[-1], printed
