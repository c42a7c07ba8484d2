"""The service and `signoff web` name the extra to install, in one line with a non-zero exit
and nothing written, when a configured part's packages are absent (made absent in a
subprocess; tests/test_wheel.py runs the core alone in a venv of its own). Without the
part configured, the service runs without them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.extras_helpers import BLOCKER, ROOT, extra_line, service_without, signoff_without
from tests.timing import WAIT

TELEGRAM_ENV = {"TELEGRAM_BOT_TOKEN": "123456:not-a-real-token", "TELEGRAM_CHAT_ID": "42",
                "TELEGRAM_ALLOWED_USER_IDS": "7"}


def _env(dsn: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TELEGRAM_") and k != "SIGNOFF_CONFIG"}
    return env | {"DATABASE_URL": dsn} | extra


def _tables(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]


@pytest.mark.parametrize("blocked", ["aiohttp", "jinja2", "pypdfium2", "pygments"])
def test_signoff_web_without_the_web_extra_says_which_extra(empty_dsn: str,
                                                            blocked: str) -> None:
    done = signoff_without((blocked,), "web", "--listen", "127.0.0.1:0", env=_env(empty_dsn))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [extra_line("the web inbox", "web")]
    assert _tables(empty_dsn) == []


def test_the_service_with_telegram_configured_needs_the_telegram_extra(
        empty_dsn: str) -> None:
    done = service_without(("telegram",), env=_env(empty_dsn, **TELEGRAM_ENV))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == extra_line("the Telegram channel", "telegram")
    assert "Traceback" not in done.stderr
    assert _tables(empty_dsn) == []  # checked before anything is written


@pytest.mark.parametrize(("web", "blocked", "what", "extra"), [
    ("", "jinja2", "the web inbox", "web"),
    ("[web]\nenabled = false\n", "prometheus_client",
     "the service's [http] listener (/healthz, /metrics)", "metrics"),
])
def test_the_services_listener_needs_its_extra(empty_dsn: str, tmp_path: Path, web: str,
                                               blocked: str, what: str, extra: str) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text(f'[http]\nlisten = "127.0.0.1:0"\n{web}')
    done = service_without((blocked,), "--config", str(config), env=_env(empty_dsn))
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == extra_line(what, extra)
    assert "Traceback" not in done.stderr
    assert _tables(empty_dsn) == []


def test_the_service_runs_without_the_extras_of_parts_it_does_not_use(
        dsn: str, tmp_path: Path) -> None:
    # Telegram off and no listener: neither python-telegram-bot, aiohttp, Jinja2 nor the
    # PDF and diff libraries are needed, and none is loaded.
    config = tmp_path / "signoff.toml"
    config.write_text("[web]\nenabled = false\n")
    blocked = ("telegram", "aiohttp", "prometheus_client", "jinja2", "pypdfium2", "pygments")
    body = f"from bot.__main__ import main\nsys.exit(main(['--config', {str(config)!r}]))"
    code = f"BLOCKED = {blocked!r}\n{BLOCKER}\n{body}"
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env(dsn),
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + WAIT
    try:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "service started" in line:
                break
        assert any("service started" in line for line in lines), "".join(lines)
        assert any("telegram: off" in line for line in lines), "".join(lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=WAIT)[1]
    assert proc.returncode == 0, "".join(lines) + rest
