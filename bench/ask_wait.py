"""A decision → the waiting asker's answer (issue 44: p99 ≤ 20 ms while the same worker
carries ≥ 1,000 other tasks a second), for `signoff ask --wait` and for the HTTP API's
long-poll, printed as JSON.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.ask_wait                     # 100 decisions a figure
    .venv/bin/python -m bench.ask_wait --decisions 10      # a short run

It drops and recreates its own database (`--database`, default signoff_bench_askwait) and
runs bench.resume's load: a real `signoff worker` (16 slots, `bench.handlers:bulk_or_resume`)
drains bulk tasks of `--bulk-ms` that a feeder process keeps pending. Beside it, one at a
time, a request is asked and decided with `TaskQueue.approval_decide` (the call the Telegram
bot's buttons make), the decisions cycling approve, skip and revise:

- `cli`: `python -m taskqueue ask bench.ask --question Q --key K --wait`, a process of its
  own with DATABASE_URL in its environment. Once it said on stderr that it waits and the
  database holds its request (`request_find`), the decision; timed to the first line of
  its stdout (the answer a person reads; the child runs with PYTHONUNBUFFERED=1, so a pipe
  gets the line when a terminal would) and to its exit, which adds closing its pool and the
  interpreter's teardown. The goal's figure is the first line.
- `api`: the HTTP API served in this process, as the service serves it beside its Telegram
  bot (bot.api's routes on aiohttp, 127.0.0.1), with an `ask` token made by `signoff token
  add`: POST /api/v1/requests, then GET /api/v1/requests/ID?wait=30 held open; timed to the
  long-poll's response, read and parsed by the client.

Each decision comes a random time between half of `--settle` and `--settle` after the asker
waits, so it falls anywhere in a polling asker's period. The clock is time.perf_counter()
of this process, from just before the decide call. Every asker must answer once, after its
decision, with that decision (the line and exit code docs/cli.md gives; the API's JSON), and
every request must be decided once in the database: exit code 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aiohttp
from aiohttp import web

from bench.database import database_options, run_in_own_database
from bench.measure import execute, latency_ms, positive, report
from bench.resume import (
    BACKLOG,
    BULK_MS,
    LOAD_CONCURRENCY,
    LOAD_GOAL_RATE,
    LOAD_HANDLER,
    POLL_INTERVAL,
    ROOT,
    STEP_TIMEOUT,
    bulk_rate,
    feeder_process,
    load_options,
    until,
    worker_process,
)
from bot.api.app import ApiApp
from bot.api.routes import install
from bot.api.settings import ApiSettings
from taskqueue import Decision, TaskQueue, redact, secret_register

log = logging.getLogger("signoff.bench")

CAPABILITY = "bench.ask"
TOKEN_NAME = "bench-askwait"
DECIDER = "bench"
NOTE = "bench: revise it"
# Defaults: decisions a figure; the longest wait before a decision (seconds); how long the
# worker runs before the first figure, to reach its steady rate; the long-poll's wait.
DECISIONS = 100
SETTLE = 0.5
WARM_UP = 2.0
LONG_POLL = 30
GOAL_P99_MS = 20.0
SEED = 44
# Each decision in turn, with the line `signoff ask --wait` prints for it and its exit
# code (docs/cli.md, "Exit codes").
CYCLE = [(Decision.APPROVED, f"approved by {DECIDER}", 0),
         (Decision.SKIPPED, f"skipped by {DECIDER}", 11),
         (Decision.REVISED, f"revised: {NOTE}", 10)]
# The API's rate limit, raised: the bench makes two calls a decision, past the default burst.
API_SETTINGS = ApiSettings(rate_per_minute=60_000, burst=10_000)
WAITS = re.compile(r"request (\d+) waits for a decision")
CLOCK = ("time.perf_counter() of this process: from just before approval_decide to the "
         "asker's answer as this process reads it")

T = TypeVar("T")


class Wrong(Exception):
    """An asker answered early, twice, or not with its decision: exactly once failed."""


def child_env(dsn: str) -> dict[str, str]:
    """A `signoff` child's environment: this database, and nothing that sends it elsewhere
    (a config, a service's URL and token)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SIGNOFF_CONFIG", "SIGNOFF_URL", "SIGNOFF_TOKEN")}
    return env | {"DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1"}


async def stamped(awaitable: Awaitable[T]) -> tuple[T, float]:
    """What `awaitable` gave, and when (time.perf_counter()) this process had it."""
    value = await awaitable
    return value, time.perf_counter()


def _key(kind: str, i: int) -> str:
    return f"{kind}-warm-up" if i < 0 else f"{kind}-{i}"


async def token_make(dsn: str) -> str:
    """An `ask` token made as an operator makes one (`signoff token add`), registered as
    a secret at once so that no output of this process shows it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskqueue", "token", "add", TOKEN_NAME, "--scopes", "ask",
        cwd=ROOT, env=child_env(dsn), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), STEP_TIMEOUT)
    lines = out.decode().strip().splitlines()
    token = lines[-1].strip() if lines else ""
    secret_register(token)
    if proc.returncode != 0 or not token:
        raise RuntimeError(f"signoff token add exited {proc.returncode}: "
                           f"{redact(err.decode(errors='replace'))[-2000:]}")
    return token


async def decide(q: TaskQueue, approval_id: int, i: int) -> tuple[float, float]:
    """Decide round `i`'s approval as the Telegram bot's buttons do; (when it started by
    time.perf_counter(), how long the call took)."""
    decision = CYCLE[i % len(CYCLE)][0]
    started = time.perf_counter()
    await q.approval_decide(approval_id, decision, DECIDER,
                            NOTE if decision is Decision.REVISED else None)
    return started, time.perf_counter() - started


async def answered(awaitable: Awaitable[T], key: str) -> T:
    """The asker's answer; Wrong when none came within STEP_TIMEOUT of the decision."""
    try:
        return await asyncio.wait_for(awaitable, STEP_TIMEOUT)
    except TimeoutError:
        raise Wrong(f"{key}: no answer {STEP_TIMEOUT:g} s after the decision") from None


async def _waiting_said(proc: asyncio.subprocess.Process) -> int:
    """The request id from the asker's stderr line that it waits for a decision."""
    assert proc.stderr is not None
    seen: list[str] = []
    while line := await proc.stderr.readline():
        seen.append(line.decode(errors="replace"))
        if found := WAITS.search(seen[-1]):
            return int(found.group(1))
    raise RuntimeError(f"signoff ask ended before it waited: {redact(''.join(seen))[-2000:]}")


async def cli_round(q: TaskQueue, dsn: str, i: int, settle: float) -> tuple[float, float, float]:
    """One `signoff ask --wait` decided: (to its first line, to its exit, the decide call)
    in seconds."""
    key = _key("cli", i)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskqueue", "ask", CAPABILITY, "--question",
        f"Ship build {key}?", "--key", key, "--wait", cwd=ROOT, env=child_env(dsn),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    # Read from the start, so that an answer given before the decision is caught.
    line = asyncio.create_task(stamped(proc.stdout.readline()))
    exited = asyncio.create_task(stamped(proc.wait()))
    try:
        said = await asyncio.wait_for(_waiting_said(proc), STEP_TIMEOUT)
        asked = await until(lambda: q.request_find(CAPABILITY, key), f"request {key} parked")
        if asked.id != said:
            raise Wrong(f"{key}: the asker waits on request {said}, the database has {asked.id}")
        await asyncio.sleep(settle)
        if line.done() or exited.done():
            raise Wrong(f"{key}: signoff ask answered before its decision")
        started, called = await decide(q, asked.approval.id, i)
        (first, at_line), (returncode, at_exit) = await answered(
            asyncio.gather(line, exited), key)
        rest = await proc.stdout.read()
        _, text, code = CYCLE[i % len(CYCLE)]
        if first.decode().rstrip("\n") != text or rest or returncode != code:
            raise Wrong(f"{key}: expected {text!r} and exit {code}, got "
                        f"{(first + rest).decode()!r} and exit {returncode}")
        return at_line - started, at_exit - started, called
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for task in (line, exited):
            task.cancel()
        await proc.wait()


@contextlib.asynccontextmanager
async def api_served(q: TaskQueue) -> AsyncIterator[str]:
    """The HTTP API on 127.0.0.1 in this process, on `q`, as the service mounts it; its
    base URL."""
    app = web.Application()
    install(ApiApp(q, API_SETTINGS), app)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/api/v1"
    finally:
        await runner.cleanup()


async def _long_poll(http: aiohttp.ClientSession, base: str, rid: int) -> tuple[int, Any]:
    async with http.get(f"{base}/requests/{rid}", params={"wait": str(LONG_POLL)}) as r:
        return r.status, await r.json(content_type=None)


async def api_round(q: TaskQueue, http: aiohttp.ClientSession, base: str, i: int,
                    settle: float) -> tuple[float, float]:
    """One request asked through the API and decided while its long-poll is open: (to the
    long-poll's response, the decide call) in seconds."""
    key = _key("api", i)
    async with http.post(f"{base}/requests", json={
            "capability": CAPABILITY, "question": f"Ship build {key}?", "key": key}) as r:
        made = await r.json(content_type=None)
        if r.status != 201:
            raise RuntimeError(f"POST /requests answered {r.status}: {made.get('error')}")
    rid = int(made["id"])
    approval = (await q.request_get(rid)).approval.id
    poll = asyncio.create_task(stamped(_long_poll(http, base, rid)))
    try:
        await asyncio.sleep(settle)
        if poll.done():
            raise Wrong(f"{key}: the long-poll answered before its decision")
        started, called = await decide(q, approval, i)
        (status, body), at = await answered(poll, key)
    finally:
        poll.cancel()
    decision = CYCLE[i % len(CYCLE)][0]
    if status != 200 or body.get("id") != rid or body.get("status") != decision.value \
            or body.get("decided_by") != DECIDER:
        raise Wrong(f"{key}: expected {decision.value} by {DECIDER}, got {status} "
                    f"{body.get('status')} by {body.get('decided_by')}")
    return at - started, called


async def _listeners(dsn: str) -> int:
    row = await execute(dsn, "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = "
                             "current_database() AND application_name = 'signoff-listener' "
                             "AND query ILIKE 'LISTEN %'")
    return int(row["n"])


Round = Callable[[int], Awaitable[tuple[float, ...]]]


async def _checked(one: Round, i: int, problems: list[str]) -> tuple[float, ...] | None:
    """Round `i`, or None when its asker answered wrongly (a problem, not a sample)."""
    try:
        return await one(i)
    except Wrong as exc:
        problems.append(str(exc))
        return None


async def measured(dsn: str, one: Round, decisions: int, problems: list[str], *,
                   ready: Callable[[], Awaitable[object]] | None = None) -> dict[str, Any]:
    """An untimed round (-1), `ready`, then `decisions` timed rounds, one at a time, and
    the bulk rate carried meanwhile (the database's clock)."""
    await _checked(one, -1, problems)
    if ready is not None:
        await ready()
    since = (await execute(dsn, "SELECT clock_timestamp() AS t"))["t"]
    samples = [s for i in range(decisions) if (s := await _checked(one, i, problems))]
    until_ = (await execute(dsn, "SELECT clock_timestamp() AS t"))["t"]
    return {"samples": samples, "bulk": await bulk_rate(dsn, since, until_)}


def summary(samples: list[tuple[float, ...]], answer: str, exit_: str | None = None
            ) -> dict[str, Any]:
    """The answer's latency (each sample's first item), the exit's (its second, when
    given), the decide call's (its last) and, from the call's return (its commit) to the
    answer, the asker's own part."""
    found = {answer: latency_ms([s[0] for s in samples])}
    if exit_ is not None:
        found[exit_] = latency_ms([s[1] for s in samples])
    return found | {"decide_call": latency_ms([s[-1] for s in samples]),
                    "after_commit": latency_ms([s[0] - s[-1] for s in samples])}


def _goal(answer: dict[str, Any], bulk: dict[str, Any]) -> dict[str, Any]:
    return {"goal": f"p99 ≤ {GOAL_P99_MS:g} ms while ≥ {LOAD_GOAL_RATE:g} bulk tasks/s",
            "met": answer["p99_ms"] is not None and answer["p99_ms"] <= GOAL_P99_MS
            and bulk["tasks_per_s"] >= LOAD_GOAL_RATE}


async def cli_figure(q: TaskQueue, dsn: str, decisions: int, settle: Callable[[], float],
                     problems: list[str]) -> dict[str, Any]:
    """Figure 1: `signoff ask --wait`, each in a process of its own."""
    async def one(i: int) -> tuple[float, ...]:
        return await cli_round(q, dsn, i, settle())

    log.info("ask_wait: %d decisions, each to a signoff ask --wait of its own", decisions)
    found = await measured(dsn, one, decisions, problems)
    figure = summary(found["samples"], "to_first_line", "to_exit")
    log.info("ask_wait: signoff ask --wait answered, p99 %s ms", figure["to_first_line"]["p99_ms"])
    return {"asker": f"python -m taskqueue ask {CAPABILITY} --question Q --key K --wait",
            **figure, "goal_figure": "to_first_line: the answer as the person reads it; the exit "
                           "adds the asker's pool closing and the interpreter's teardown",
            "bulk": found["bulk"], **_goal(figure["to_first_line"], found["bulk"])}


async def api_figure(q: TaskQueue, dsn: str, token: str, decisions: int,
                     settle: Callable[[], float], problems: list[str]) -> dict[str, Any]:
    """Figure 2: the API's long-poll. The untimed round subscribes the API's waker, whose
    LISTEN (one more listening connection) must be in place before anything is timed."""
    log.info("ask_wait: %d decisions, each to an API long-poll", decisions)
    before = await _listeners(dsn)
    async with api_served(q) as base, aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {token}"}) as http:
        async def one(i: int) -> tuple[float, ...]:
            return await api_round(q, http, base, i, settle())

        found = await measured(dsn, one, decisions, problems, ready=lambda: until(
            lambda: _more(dsn, before), "the API waker's LISTEN"))
    figure = summary(found["samples"], "to_response")
    log.info("ask_wait: the long-poll answered, p99 %s ms", figure["to_response"]["p99_ms"])
    return {"asker": f"GET /api/v1/requests/ID?wait={LONG_POLL} (aiohttp, this process)",
            **figure, "bulk": found["bulk"], **_goal(figure["to_response"], found["bulk"])}


async def _more(dsn: str, before: int) -> bool | None:
    return True if await _listeners(dsn) > before else None


async def decided_once(q: TaskQueue, kind: str, decisions: int) -> list[str]:
    """Each request of `kind` (the warm-up's too) decided once, with its decision."""
    problems = []
    for i in range(-1, decisions):
        asked = await q.request_find(CAPABILITY, _key(kind, i))
        expected = CYCLE[i % len(CYCLE)][0]
        if asked is None:
            problems.append(f"{_key(kind, i)}: no request")
            continue
        events = (await q.task_detail(asked.id)).events
        decided = sum(1 for e in events if e.kind == "decided")
        if decided != 1 or asked.decision is not expected:
            problems.append(f"{_key(kind, i)}: {decided} decided events, decision "
                            f"{asked.decision}, expected {expected.value}")
    return problems


async def ask_wait(dsn: str, decisions: int = DECISIONS, *, bulk_ms: float = BULK_MS,
                   concurrency: int = LOAD_CONCURRENCY, backlog: int = BACKLOG,
                   settle: float = SETTLE, warm_up: float = WARM_UP) -> dict[str, Any]:
    """Both figures on the migrated database at `dsn`, under one load, and the checks."""
    token = await token_make(dsn)
    rng = random.Random(SEED)

    def wait() -> float:
        return rng.uniform(settle / 2, settle)

    problems: list[str] = []
    async with worker_process(dsn, POLL_INTERVAL, handler=LOAD_HANDLER,
                              concurrency=concurrency), \
            TaskQueue.connect(dsn, min_size=1, max_size=4) as q:
        async with feeder_process(dsn, bulk_ms, backlog):
            await asyncio.sleep(warm_up)  # the worker reaches its steady rate
            cli = await cli_figure(q, dsn, decisions, wait, problems)
            api = await api_figure(q, dsn, token, decisions, wait, problems)
        for kind in ("cli", "api"):
            problems += await decided_once(q, kind, decisions)
    return {"decisions": decisions, "clock": CLOCK,
            "cycle": [d.value for d, _, _ in CYCLE], "settle": settle,
            "worker": {"concurrency": concurrency, "poll_interval": POLL_INTERVAL,
                       "bulk_ms": bulk_ms, "backlog": backlog, "handler": LOAD_HANDLER},
            "cli": cli, "api": api, "goal": cli["goal"], "met": cli["met"] and api["met"],
            "exactly_once": not problems, "problems": problems[:20]}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, "signoff_bench_askwait")
    p.add_argument("--decisions", type=positive, default=DECISIONS,
                   help=f"decisions timed in each figure ({DECISIONS})")
    p.add_argument("--settle", type=float, default=SETTLE,
                   help=f"the longest an asker waits before its decision, s ({SETTLE:g})")
    load_options(p)
    p.add_argument("--backlog", type=positive, default=BACKLOG,
                   help=f"bulk tasks the feeder keeps pending ({BACKLOG})")
    p.add_argument("--warm-up", type=float, default=WARM_UP,
                   help=f"seconds the load runs before the first figure ({WARM_UP:g})")
    return p.parse_args(argv)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)

    async def figure(dsn: str) -> dict[str, Any]:
        return await ask_wait(dsn, args.decisions, bulk_ms=args.bulk_ms,
                              concurrency=args.concurrency, backlog=args.backlog,
                              settle=args.settle, warm_up=args.warm_up)

    return await run_in_own_database("signoff decision → ask --wait / long-poll answer",
                                     "bench.ask_wait", argv, args, figure)


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON; 1 when an asker did not answer exactly once with its
    decision, 0 otherwise (even when the goal is not met: see `met`)."""
    doc = report(benchmark, argv)
    return 0 if doc["exactly_once"] else 1


if __name__ == "__main__":
    sys.exit(main())
