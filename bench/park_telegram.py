"""Park → Telegram under load: a parked task's request at the Bot API, as JSON (issue 44).

How soon a parked task's request leaves for Telegram, its sendMessage arriving at a fake Bot
API, while the same worker carries ≥ 1,000 other tasks a second (goal: p99 ≤ 50 ms).

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.park_telegram                # 200 parks
    .venv/bin/python -m bench.park_telegram --parks 20     # a short run

It drops and recreates its own database (`--database`, default signoff_bench_park_telegram)
and starts three things: one real `signoff worker` (16 slots, handler
`bench.park_telegram:bulk_or_park`) fed bulk tasks of `--bulk-ms` each by bench.resume's
feeder process; the real service (`python -m bot`, no workers of its own, `[http]` off)
whose `[telegram]` points at a fake Bot API on 127.0.0.1 (tests/bot/fake_telegram.py, which
python-telegram-bot talks to through its base_url; the token, random for the run, is only in
the service's environment); and that fake, which notes the time.time() each message arrives.
Then, one park at a time: enqueue a task ahead of the bulk backlog, the worker's handler
parks it at a question, the service's outbox sender sends the request, and the bench waits
for it at the fake, then `--gap` seconds, before the next.

Each latency runs from the handler's own time.time(), taken as it returns Park and saved in
the park's request (`parked_at`), to the fake's time.time() as the sendMessage arrives: the
park's commit, its NOTIFY, the service's outbox claim, the rendering and the HTTP call are
all inside it. Both clocks are this machine's. Beside it, the same end from the approval's
`created_at` (the park transaction's start, by the database's clock, same machine).

The chat is a private one (a positive id): the service paces a group chat at Telegram's 20
messages a minute, which would measure the pacing, not the path. The gap keeps the run under
the 30 a second it allows in all. Exits 1 when a park did not bring exactly one message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.database import database_options, run_in_own_database
from bench.handlers import bulk_or_resume
from bench.measure import execute, latency_ms, positive, report
from bench.resume import (
    BACKLOG,
    BULK_MS,
    CAPABILITY,
    LOAD_CONCURRENCY,
    LOAD_GOAL_RATE,
    PARK_PRIORITY,
    POLL_INTERVAL,
    ROOT,
    bulk_rate,
    feeder_process,
    load_options,
    until,
    worker_process,
)
from bot.telegram.callback import decode
from bot.telegram.store import CHANNEL
from taskqueue import Outcome, Park, Task, TaskContext, TaskQueue, secret_register
from tests.bot.fake_telegram import FakeTelegram

HANDLER = "bench.park_telegram:bulk_or_park"
QUESTION = "Send it?"
# Defaults: parks timed (after WARMUP untimed ones: the first render loads the templates),
# the pause after each arrival, how long the worker runs before the first, and how long the
# bench waits after the last for a late second message.
PARKS = 200
WARMUP = 1
GAP = 0.05
STEADY = 2.0
SETTLE = 1.0
GOAL_P99_MS = 50.0
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# A private chat and its one allowed person (see the docstring for why not a group).
CHAT_ID = 424242
USER_ID = 424242
# The fake holds a getUpdates open this long, as Telegram does (up to the bot's timeout):
# an idle long poll costs neither process anything.
LONG_POLL = 2.0
SERVICE_STARTED = "telegram bot started"
CLOCK = ("time.time() of this machine: in the handler as it returns Park (saved in the "
         "request as parked_at), and in the fake Bot API as the sendMessage arrives")
CONFIG = """\
[http]
listen = "off"

[telegram]
chat_id = {chat}
allowed_user_ids = [{user}]
api_base_url = "{url}"
digest = false
"""


async def bulk_or_park(task: Task, ctx: TaskContext) -> Outcome:
    """Bulk work as bench.handlers' (`{"bulk_ms": N}`); any other task parks at a question
    with the wall-clock time it parked in its request."""
    if task.payload.get("bulk_ms") is not None or task.decision is not None:
        return await bulk_or_resume(task, ctx)
    return Park(QUESTION, request={"bench": "park → telegram", "parked_at": time.time()})


@dataclass(frozen=True)
class Arrival:
    """A message the service sent: the approval its buttons name (None: no buttons) and
    the fake's time.time() when it arrived."""

    approval_id: int | None
    at: float


class TimedTelegram(FakeTelegram):
    """The suite's fake Bot API, also noting when each message arrives (sendMessage,
    sendPhoto and sendDocument all store one) and for which approval."""

    def __init__(self, token: str) -> None:
        super().__init__(token, long_poll=LONG_POLL)
        self.arrivals: list[Arrival] = []
        self.arrived = asyncio.Event()

    def _store(self, p: dict[str, Any], **content: Any) -> dict[str, Any]:
        self.arrivals.append(Arrival(approval_of(p), time.time()))
        self.arrived.set()
        return super()._store(p, **content)

    def approvals(self) -> set[int]:
        return {a.approval_id for a in self.arrivals if a.approval_id is not None}

    async def approvals_reach(self, n: int, timeout: float = START_TIMEOUT) -> None:
        """Wait (woken by each arrival, no polling) until `n` approvals have a message."""
        deadline = time.monotonic() + timeout
        while len(self.approvals()) < n:
            self.arrived.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"timed out after {timeout:g}s waiting for request {n}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), left)


def approval_of(params: dict[str, Any]) -> int | None:
    """The approval a message's first button names (its callback data, bot.telegram's
    `so1:<approval id>:…`), or None."""
    markup: Any = params.get("reply_markup")
    if isinstance(markup, str):
        markup = json.loads(markup)
    try:
        data = markup["inline_keyboard"][0][0]["callback_data"]
    except (TypeError, KeyError, IndexError):
        return None
    tap = decode(data)
    return tap.approval_id if tap else None


def bot_token() -> str:
    """A token for this run only, in Telegram's shape; masked in everything printed."""
    token = f"{secrets.randbelow(9 * 10**8) + 10**8}:{secrets.token_hex(17)}"
    secret_register(token)
    return token


async def _started(log: Path, proc: subprocess.Popen[bytes]) -> bool | None:
    if proc.poll() is not None:
        raise RuntimeError(f"the service exited with {proc.returncode} at its start")
    return True if SERVICE_STARTED in log.read_text(errors="replace") else None


@contextlib.asynccontextmanager
async def telegram_service(dsn: str, fake: FakeTelegram, folder: Path) -> AsyncIterator[None]:
    """A real `python -m bot` sending to `fake`, its Telegram part started before this
    yields; its log goes to stderr when something failed, and it must exit 0 on SIGTERM."""
    config = folder / "signoff.toml"
    config.write_text(CONFIG.format(chat=CHAT_ID, user=USER_ID, url=fake.url))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TELEGRAM_") and k != "SIGNOFF_CONFIG"}
    env |= {"DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1", "TELEGRAM_BOT_TOKEN": fake.token}
    log = folder / "service.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "--config", str(config)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        await until(lambda: _started(log, proc), "the service's Telegram part", START_TIMEOUT)
        yield
    except BaseException:
        sys.stderr.write(log.read_text(errors="replace")[-4000:])  # the service masks its token
        raise
    finally:
        code = await _stopped(proc)
    if code != 0:
        raise RuntimeError(f"the service exited with {code} on SIGTERM:\n"
                           f"{log.read_text(errors='replace')[-4000:]}")


async def _stopped(proc: subprocess.Popen[bytes]) -> int:
    """SIGTERM and the exit code; SIGKILL past STOP_TIMEOUT (-9)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return await asyncio.to_thread(proc.wait, STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        return await asyncio.to_thread(proc.wait)


async def park_one(q: TaskQueue, fake: TimedTelegram, i: int, gap: float) -> int:
    """Enqueue a task that parks (ahead of the bulk backlog, so that it is claimed soon:
    the figure starts at the park) and wait for the request's message; the task's id."""
    enq = await q.task_enqueue(CAPABILITY, {"park": i}, priority=PARK_PRIORITY)
    # One park at a time: the next approval the fake sees is this task's.
    await fake.approvals_reach(i + 1)
    await asyncio.sleep(gap)
    return enq.id


async def _approvals(dsn: str, task_ids: list[int]) -> list[tuple[int, int, float, float]]:
    """(approval id, task id, parked_at, created_at as epoch seconds) of the parks."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("""
            SELECT id, task_id, (request->>'parked_at')::float8,
                   EXTRACT(EPOCH FROM created_at)::float8
            FROM approvals WHERE task_id = ANY(%(ids)s) ORDER BY id""", {"ids": task_ids})
        return [(r[0], r[1], r[2], r[3]) for r in await cur.fetchall()]


async def _delivered(dsn: str, task_ids: list[int]) -> int:
    row = await execute(dsn, """
        SELECT count(*) AS n FROM notifications n JOIN notification_deliveries d
          ON d.notification_id = n.id AND d.channel = %(channel)s
        WHERE n.kind = 'approval_request' AND n.task_id = ANY(%(ids)s)
          AND d.delivered_at IS NOT NULL""", {"channel": CHANNEL, "ids": task_ids})
    return int(row["n"])


def exactly_once(task_ids: list[int], approvals: list[tuple[int, int, float, float]],
                 arrivals: list[Arrival], delivered: int) -> dict[str, Any]:
    """Each park made one approval, each approval one message, the outbox marked each
    delivered, and no message named an approval that is not a park's."""
    per_task = Counter(a[1] for a in approvals)
    per_approval = Counter(a.approval_id for a in arrivals if a.approval_id is not None)
    ours = {a[0] for a in approvals}
    counts = {
        "parks": len(task_ids), "approvals": len(approvals), "messages": len(arrivals),
        "parks_without_one_approval": sum(1 for t in task_ids if per_task[t] != 1),
        "approvals_without_a_message": sum(1 for a in ours if per_approval[a] == 0),
        "approvals_with_more_than_one": sum(1 for a in ours if per_approval[a] > 1),
        "messages_for_other_approvals": sum(n for a, n in per_approval.items() if a not in ours),
        "messages_without_buttons": sum(1 for a in arrivals if a.approval_id is None),
        "outbox_delivered": delivered}
    ok = (counts["approvals"] == counts["parks"] == delivered
          and not any(counts[k] for k in ("parks_without_one_approval",
                                          "approvals_without_a_message",
                                          "approvals_with_more_than_one",
                                          "messages_for_other_approvals")))
    return {"ok": ok, **counts}


def latencies(timed: list[int], approvals: list[tuple[int, int, float, float]],
              arrivals: list[Arrival]) -> dict[str, Any]:
    """Park → message, from the handler's time and from the park transaction's start."""
    first: dict[int | None, float] = {}
    for a in arrivals:
        first.setdefault(a.approval_id, a.at)
    wanted = set(timed)
    rows = [a for a in approvals if a[1] in wanted]
    from_handler = [first[a[0]] - a[2] for a in rows if a[0] in first]
    figure = latency_ms(from_handler)
    return {"park_to_request": {**figure, "min_ms": round(min(from_handler, default=0) * 1000, 3)},
            "park_transaction_to_request": latency_ms([first[a[0]] - a[3] for a in rows
                                                       if a[0] in first])}


async def park_telegram(dsn: str, parks: int = PARKS, *, bulk_ms: float = BULK_MS,
                        concurrency: int = LOAD_CONCURRENCY, gap: float = GAP,
                        steady: float = STEADY, warmup: int = WARMUP) -> dict[str, Any]:
    """The figure, on the migrated database at `dsn`: park → request at the Bot API under
    load, p50/p95/p99/max in ms; the bulk rate over the timed parks; exactly once."""
    fake = TimedTelegram(bot_token())
    await fake.start()
    try:
        # The worker first: its LISTEN connection is then the only one bench.resume's wait
        # can see (the service keeps one too).
        with tempfile.TemporaryDirectory(prefix="signoff-park-") as folder:
            async with worker_process(dsn, POLL_INTERVAL, handler=HANDLER,
                                      concurrency=concurrency), \
                    telegram_service(dsn, fake, Path(folder)), \
                    TaskQueue.connect(dsn, min_size=1, max_size=2) as q, \
                    feeder_process(dsn, bulk_ms, BACKLOG):
                await asyncio.sleep(steady)  # the worker reaches its steady rate
                warm = [await park_one(q, fake, i, gap) for i in range(warmup)]
                since = (await execute(dsn, "SELECT clock_timestamp() AS t"))["t"]
                timed = [await park_one(q, fake, warmup + i, gap) for i in range(parks)]
                until_ = (await execute(dsn, "SELECT clock_timestamp() AS t"))["t"]
                await asyncio.sleep(SETTLE)  # a second message for a park would arrive now
        bulk = await bulk_rate(dsn, since, until_)
    finally:
        await fake.stop()
    ids = warm + timed
    approvals = await _approvals(dsn, ids)
    figure = latencies(timed, approvals, fake.arrivals)
    p99 = figure["park_to_request"]["p99_ms"]
    return {"parks": parks, "warmup": warmup, "gap_s": gap, "clock": CLOCK,
            "chat": "private (positive id): paced only by the 30 messages a second in all",
            "worker": {"concurrency": concurrency, "poll_interval": POLL_INTERVAL,
                       "bulk_ms": bulk_ms, "backlog": BACKLOG},
            "bulk": bulk, **figure,
            "exactly_once": exactly_once(ids, approvals, fake.arrivals,
                                         await _delivered(dsn, ids)),
            "goal": f"p99 ≤ {GOAL_P99_MS:g} ms while ≥ {LOAD_GOAL_RATE:g} bulk tasks/s",
            "met": (p99 is not None and p99 <= GOAL_P99_MS
                    and bulk["tasks_per_s"] >= LOAD_GOAL_RATE)}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, "signoff_bench_park_telegram")
    p.add_argument("--parks", type=positive, default=PARKS, help="parks timed (200)")
    load_options(p)
    p.add_argument("--gap", type=float, default=GAP,
                   help="seconds between a request's arrival and the next park (0.05)")
    p.add_argument("--steady", type=float, default=STEADY,
                   help="seconds the worker runs under load before the first park (2)")
    return p.parse_args(argv)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)

    async def figure(dsn: str) -> dict[str, Any]:
        return await park_telegram(dsn, args.parks, bulk_ms=args.bulk_ms,
                                   concurrency=args.concurrency, gap=args.gap,
                                   steady=args.steady)

    return await run_in_own_database("signoff park → Telegram", "bench.park_telegram", argv,
                                     args, figure)


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON; 1 when a park did not bring exactly one message, else 0
    even when the goal is not met (see `met`)."""
    doc = report(benchmark, argv)
    return 0 if doc["exactly_once"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
