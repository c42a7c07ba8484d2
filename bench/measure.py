"""What every figure shares: timing, percentiles, task batches, one-statement SQL, the
command line's number types and output with its secrets masked."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from taskqueue import (
    NewTask,
    RedactingFilter,
    TaskQueue,
    redact,
    secret_register_dsn,
    secret_register_environment,
)

T = TypeVar("T")


def latency_ms(samples: Sequence[float]) -> dict[str, Any]:
    """Nearest-rank p50/p95/p99 and max of durations in seconds, in milliseconds."""
    ordered = sorted(samples)

    def at(p: float) -> float | None:
        if not ordered:
            return None
        return round(ordered[max(0, math.ceil(len(ordered) * p) - 1)] * 1000, 3)

    return {"n": len(ordered), "p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99),
            "max_ms": at(1.0)}


def rate(count: int, seconds: float) -> float:
    """Count per second, rounded; 0 for an empty interval."""
    return round(count / seconds, 1) if seconds > 0 else 0.0


async def timed(awaitable: Awaitable[T]) -> tuple[T, float]:
    """The awaitable's result and how long it took, in seconds."""
    start = time.perf_counter()
    result = await awaitable
    return result, time.perf_counter() - start


def batches(count: int, size: int) -> list[list[NewTask]]:
    """`count` small tasks in lists of at most `size`."""
    items = [NewTask({"i": i}) for i in range(count)]
    return [items[i:i + size] for i in range(0, count, size)]


async def execute(dsn: str, statement: str | sql.Composed,
                  params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one statement in autocommit on a connection of its own; its first row or {}."""
    async with await psycopg.AsyncConnection.connect(
            dsn, autocommit=True, row_factory=dict_row) as conn:
        cur = await conn.execute(statement, params)
        return (await cur.fetchone() or {}) if cur.description else {}


async def enqueue_ids(q: TaskQueue, capability: str, tasks: int, batch: int) -> list[int]:
    """Untimed set-up: N pending tasks of a capability; their ids."""
    return [e.id for items in batches(tasks, batch)
            for e in await q.task_enqueue_many(capability, items)]


def positive(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return value


def non_negative(text: str) -> int:
    """argparse type: a whole number of at least 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of at least 0")
    return value


def secrets_masked(argv: Sequence[str]) -> None:
    """Mask what a benchmark's output could repeat of a secret: the password of each
    connection string among its arguments (`--dsn URL`, `--dsn=URL`) and of DATABASE_URL,
    and the environment's secrets. Logging to stderr starts here, through the mask."""
    secret_register_environment()
    for arg in argv:
        value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if "://" in value or "password" in value:
            secret_register_dsn(value)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())


def dumps(doc: dict[str, Any]) -> str:
    """A benchmark's JSON document, indented, with the registered secrets masked (the
    command it records repeats its arguments)."""
    return redact(json.dumps(doc, indent=2, ensure_ascii=False))


def report(benchmark: Callable[[list[str]], Coroutine[Any, Any, dict[str, Any]]],
           argv: Sequence[str] | None) -> dict[str, Any]:
    """A benchmark's command line: progress lines on stderr, its JSON document on stdout
    (the arguments are sys.argv's unless given), secrets masked in both; the document."""
    args = sys.argv[1:] if argv is None else list(argv)
    secrets_masked(args)
    doc = asyncio.run(benchmark(args))
    print(dumps(doc))
    return doc
