"""Runs real `python -m bot` services for the multi-service tests: their config, their
processes (output in a log each), their /healthz and /metrics.

Each service binds port 0 and the test reads the port it got from its log: a port picked
free beforehand could be taken (by any outgoing connection's ephemeral port) before a slow
start binds it, and the service would exit at its start-up check."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bot.conftest import ALICE, CHAT
from tests.timing import WAIT

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """\
[worker]
poll_interval_seconds = 1
grace_seconds = 1

[capabilities.asks]
handler = "tests.taskqueue.handlers_for_tests:asks"
mode = "pool"
concurrency = {concurrency}

[capabilities.demo]
handler = "tests.taskqueue.handlers_for_tests:quick"
mode = "pool"
concurrency = {concurrency}

[signals]
check_minutes = 0.02
incident_count = 3
incident_age_hours = 0

[nudges]
digest_times = ["{digest}"]

[http]
listen = "127.0.0.1:0"

[telegram]
chat_id = {chat}
allowed_user_ids = [{alice}]
api_base_url = "{url}/{name}"
"""


# The line ObservabilityServer.start logs once it serves.
_SERVING = re.compile(r"http: serving /healthz and /metrics on 127\.0\.0\.1:(\d+)")


@dataclass
class BotService:
    """One `python -m bot` process, called `name` at the fake Bot API."""

    name: str
    log: Path
    proc: subprocess.Popen[bytes]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def port(self) -> int | None:
        """The port it serves /healthz on, once its log says so."""
        found = _SERVING.search(self.output())
        return int(found[1]) if found else None

    def describe(self) -> str:
        """Whether it runs (or its exit code) and its log's last lines: for a failure's text."""
        code = self.proc.poll()
        state = "running" if code is None else f"exited with {code}"
        tail = "\n".join(self.output().splitlines()[-15:])
        return f"service {self.name} ({state}), its log ends:\n{tail}"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    async def exit_code(self, timeout: float = WAIT) -> int:
        return int(await asyncio.wait_for(asyncio.to_thread(self.proc.wait), timeout))

    def healthz(self) -> tuple[int, dict[str, Any]]:
        """(status, body) of GET /healthz; (0, {}) when nothing answers (yet)."""
        if self.port is None:
            return 0, {}
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz",
                                        timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            with exc:
                try:
                    return exc.code, json.loads(exc.read())
                except ValueError:
                    return exc.code, {}
        except (OSError, ValueError):
            return 0, {}

    def metric(self, name: str) -> float | None:
        if self.port is None:
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                        timeout=10) as r:
                text = r.read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None


def start_service(name: str, dsn: str, fake_url: str, token: str, folder: Path, *,
                  digest: str = "03:33", concurrency: int = 2) -> BotService:
    """`python -m bot --config FILE` against `dsn`, its output in folder/NAME.log."""
    config = folder / f"{name}.toml"
    config.write_text(CONFIG.format(concurrency=concurrency, digest=digest,
                                    chat=CHAT, alice=ALICE["id"], url=fake_url, name=name))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TELEGRAM_") and k != "SIGNOFF_CONFIG"}
    env |= {"DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1", "TELEGRAM_BOT_TOKEN": token}
    log = folder / f"{name}.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "--config", str(config)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return BotService(name, log, proc)


async def stop_all(*services: BotService) -> None:
    """SIGTERM what still runs and wait for it (SIGKILL past the suite's limit)."""
    for s in services:
        if s.proc.poll() is None:
            s.terminate()
    for s in services:
        try:
            await s.exit_code()
        except TimeoutError:
            s.kill()
            s.proc.wait()
