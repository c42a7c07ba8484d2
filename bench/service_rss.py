"""Service memory (issue 26, goal 8): the resident set of an idle `python -m bot`, printed as
JSON. The goal: RSS ≤ 80 MB with `signoff.example.toml` (every workload configured,
Telegram on), idle for a minute.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.service_rss                 # both cases, idle 60 s, one run each
    .venv/bin/python -m bench.service_rss --runs 3        # the median of three runs each
    .venv/bin/python -m bench.service_rss --config none --idle 5

Each run recreates the bench's own database (`--database`, default signoff_bench_service_rss)
and starts a real `python -X importtime -m bot` against it, with Telegram on: a fake Bot
API (tests/bot/fake_telegram.py, an aiohttp server on 127.0.0.1 that python-telegram-bot
long-polls) behind TELEGRAM_API_BASE_URL and a fake TELEGRAM_BOT_TOKEN. The example config
runs as a copy with these lines changed, none of which moves the figure: `[http] listen`
on port 0 (a free port, so two runs never collide on 9464), the workload's `profile`
made absolute (it is relative to the config file), and the producers' crons and the digest
time moved twelve hours from now, so no producer's catch-up or digest runs while it idles.
`none` is the service with no config (built-in defaults; TELEGRAM_CHAT_ID and
TELEGRAM_ALLOWED_USER_IDS turn Telegram on).

Once the service logs "service started", the bench lets it idle for `--idle` seconds, then
reads VmRSS, VmHWM, RssAnon and RssFile from /proc/PID/status, the packages whose shared
objects are mapped (/proc/PID/maps), and from the service's own `-X importtime` lines on
stderr which of the heavy packages it has imported. Then SIGTERM; the service must exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import shlex
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.database import ADMIN_DSN, database_create, database_drop, machine_info, machine_load
from bench.measure import report
from tests.bot.fake_telegram import FakeTelegram

log = logging.getLogger("signoff.bench")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "signoff.example.toml"
CASES = ("signoff.example.toml", "none")
IDLE = 60.0
GOAL_MB = 80.0
START_TIMEOUT = 60.0
STOP_TIMEOUT = 60.0
# The workloads' and channels' big libraries: none needs to be in an idle service.
HEAVY = ("playwright", "greenlet", "pyVmomi", "pyVim", "libvirt", "jinja2", "pypdf",
         "pypdfium2", "pygments", "lxml")
# The example's lines the bench's copy changes, or (the time zone) relies on; each must
# appear exactly once.
_LISTEN = 'listen = "127.0.0.1:9464"'
_PROFILE = 'profile = "workloads/job_applications/profile.example.toml"'
_TIMEZONE = 'timezone = "UTC"'
_CRON = re.compile(r'^cron = "[^"\n]*"', re.MULTILINE)
_DIGEST = re.compile(r'^digest_times = \[[^\]\n]*\]', re.MULTILINE)
_STATUS_KEYS = {"VmRSS": "rss_mb", "VmHWM": "hwm_mb", "RssAnon": "rss_anon_mb",
                "RssFile": "rss_file_mb"}
_SITE = re.compile(r"/(?:site|dist)-packages/([^/]+)/")


@dataclass
class Output:
    """What the service wrote on stderr: its log lines and the modules it imported."""

    lines: list[str] = field(default_factory=list)
    modules: set[str] = field(default_factory=set)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, line: str) -> None:
        if line.startswith("import time:"):
            name = line.rpartition("|")[2].strip()
            if name and name != "imported package":
                self.modules.add(name)
            return
        self.lines.append(line)
        if "service started" in line:
            self.started.set()

    def tail(self, n: int = 30) -> str:
        return "\n".join(self.lines[-n:])


def example_copy(folder: Path, *, now: datetime | None = None) -> Path:
    """signoff.example.toml with `[http] listen` on a free port, an absolute profile, and
    every producer's cron and digest time moved to twelve hours from `now` (UTC, the example's
    time zone). The example's own schedules would make a service started within an hour after
    one of them run it at start (a producer's catch-up, e.g. the 07:30 briefing, which loads
    Jinja2): that service is busy, not idle. Moved, they are still checked at start."""
    text = EXAMPLE.read_text()
    profile = ROOT / "workloads" / "job_applications" / "profile.example.toml"
    for old, new in ((_LISTEN, 'listen = "127.0.0.1:0"'), (_PROFILE, f'profile = "{profile}"'),
                     (_TIMEZONE, _TIMEZONE)):
        if text.count(old) != 1:
            raise SystemExit(f"signoff.example.toml no longer has exactly one {old!r}")
        text = text.replace(old, new)
    away = (now or datetime.now(UTC)) + timedelta(hours=12)
    text, crons = _CRON.subn(f'cron = "{away.minute} {away.hour} * * *"', text)
    text, digests = _DIGEST.subn(f'digest_times = ["{away:%H:%M}"]', text)
    if not crons or digests != 1:
        raise SystemExit("signoff.example.toml no longer has its producers' cron lines and "
                         "one [nudges] digest_times line")
    copy = folder / "signoff.toml"
    copy.write_text(text)
    return copy


def proc_status(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon and RssFile of `pid` in MB (1 MB = 1024 kB, as /proc's kB)."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in _STATUS_KEYS:
            figures[_STATUS_KEYS[key]] = round(int(value.split()[0]) / 1024, 1)
    return figures


def mapped_packages(pid: int) -> list[str]:
    """The installed packages whose shared objects `pid` has mapped."""
    found = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        match = _SITE.search(line)
        if match and ".so" in line.rpartition("/")[2]:
            found.add(match[1])
    return sorted(found)


def service_env(fake: FakeTelegram, dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TELEGRAM_") and k != "SIGNOFF_CONFIG"}
    return env | {"DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1",
                  "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": fake.url,
                  "TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_ALLOWED_USER_IDS": "11"}


async def _read(stream: asyncio.StreamReader, output: Output) -> None:
    while line := await stream.readline():
        output.add(line.decode(errors="replace").rstrip("\n"))


async def idle_service(config: Path | None, env: dict[str, str], idle: float) -> dict[str, Any]:
    """Start `python -m bot`, wait for "service started", idle, measure, stop."""
    argv = [sys.executable, "-X", "importtime", "-m", "bot"]
    argv += ["--config", str(config)] if config else []
    proc = await asyncio.create_subprocess_exec(*argv, cwd=ROOT, env=env,
                                                stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    output = Output()
    reader = asyncio.create_task(_read(proc.stderr, output))
    began = time.monotonic()
    try:
        waiting = asyncio.create_task(output.started.wait())
        await asyncio.wait({waiting, reader}, timeout=START_TIMEOUT,
                           return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if not output.started.is_set():
            raise RuntimeError(f"the service did not start:\n{output.tail()}")
        started_s = time.monotonic() - began
        await asyncio.sleep(idle)
        if proc.returncode is not None:
            raise RuntimeError(f"the service exited while idle:\n{output.tail()}")
        figures = proc_status(proc.pid)
        mapped = mapped_packages(proc.pid)
    finally:
        code = await _stopped(proc, output)
        await reader
    if code != 0:
        raise RuntimeError(f"the service exited {code}:\n{output.tail()}")
    heavy = sorted({m.split(".")[0] for m in output.modules} & set(HEAVY))
    return {**figures, "started_s": round(started_s, 2), "heavy_imported": heavy,
            "modules": len(output.modules), "mapped_packages": mapped}


async def _stopped(proc: asyncio.subprocess.Process, output: Output) -> int:
    """SIGTERM and the exit code; SIGKILL (and an error) past STOP_TIMEOUT."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise RuntimeError(f"the service did not stop on SIGTERM:\n{output.tail()}") from None


async def one_run(case: str, args: argparse.Namespace, fake: FakeTelegram,
                  folder: Path) -> dict[str, Any]:
    dsn = await database_create(args.dsn, args.database)
    try:
        config = None if case == "none" else example_copy(folder)
        log.info("service_rss: %s, idle %gs", case, args.idle)
        run = await idle_service(config, service_env(fake, dsn), args.idle)
        log.info("service_rss: %s rss %.1f MB hwm %.1f MB", case, run["rss_mb"], run["hwm_mb"])
        return run
    finally:
        await database_drop(args.dsn, args.database)


def summary(case: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A case's medians over its runs, with the runs themselves."""
    medians = {key: statistics.median(r[key] for r in runs) for key in _STATUS_KEYS.values()}
    return {"config": case, **medians, "heavy_imported": runs[-1]["heavy_imported"],
            "mapped_packages": runs[-1]["mapped_packages"], "runs": runs}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--dsn", default=ADMIN_DSN, help="admin DSN used to create the database")
    p.add_argument("--database", default="signoff_bench_service_rss",
                   help="dropped and recreated for each run, dropped at the end")
    p.add_argument("--config", action="append", choices=CASES,
                   help="a case to run (repeatable; default: both)")
    p.add_argument("--idle", type=float, default=IDLE,
                   help="seconds the service idles after it started (60)")
    p.add_argument("--runs", type=int, default=1, help="runs of each case (1); medians")
    return p.parse_args(argv)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    args = parse_args(argv)
    cases = args.config or list(CASES)
    started = time.perf_counter()
    machine = await machine_info(args.dsn)
    fake = FakeTelegram()
    await fake.start()
    runs: dict[str, list[dict[str, Any]]] = {case: [] for case in cases}
    try:
        with tempfile.TemporaryDirectory(prefix="signoff-rss-") as folder:
            for _ in range(args.runs):  # interleaved, so a noisy moment touches every case
                for case in cases:
                    runs[case].append(await one_run(case, args, fake, Path(folder)))
    finally:
        await fake.stop()
    machine["load_average_end"] = machine_load()
    results = [summary(case, runs[case]) for case in cases]
    example = next((r for r in results if r["config"] != "none"), None)
    return {"benchmark": "signoff service memory",
            "command": shlex.join(["python", "-m", "bench.service_rss", *argv]),
            "idle_seconds": args.idle, "runs": args.runs, "machine": machine,
            "cases": results, "goal": f"RSS <= {GOAL_MB:g} MB with signoff.example.toml",
            "met": None if example is None else example["rss_mb"] <= GOAL_MB,
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON; 0 even when the goal is not met (see `met`)."""
    report(benchmark, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
