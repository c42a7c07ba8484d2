"""WorkerPool: N slots claiming and running tasks of some capabilities until told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from taskqueue.errors import TRANSIENT, one_line
from taskqueue.runtime.listener import Listener
from taskqueue.runtime.runner import CapabilityRun, SliceReport, Stopping, claim_one, run_slice
from taskqueue.store.client import TASKS_CHANNEL, TaskQueue
from taskqueue.store.models import Task

log = logging.getLogger("signoff.worker")

# Defaults (seconds): polling is the fallback to NOTIFY; grace is what SIGTERM allows.
DEFAULT_POLL_INTERVAL = 5.0
DEFAULT_GRACE = 30.0
# Backoff while the database is away (seconds): doubles from MIN up to MAX.
BACKOFF_MIN = 0.2
BACKOFF_MAX = 10.0
# How many of the latest slice reports a pool keeps.
REPORTS_KEPT = 1000
# After the grace period, how long releasing what still runs may take (seconds).
ABORT_WAIT = 15.0


def default_worker_name() -> str:
    """host:pid, so `signoff ls` shows where a running task is."""
    return f"{socket.gethostname()}:{os.getpid()}"


# Told of every finished slice: capability, outcome (SliceReport.outcome) and seconds.
SliceObserver = Callable[[str, str, float], None]


@dataclass(frozen=True)
class WorkerConfig:
    """A pool's settings: slots, the polling fallback, the shutdown grace and its name;
    `on_slice` (optional) is called after each slice, e.g. to feed a metrics histogram."""

    concurrency: int = 1
    poll_interval: float = DEFAULT_POLL_INTERVAL
    grace: float = DEFAULT_GRACE
    name: str = field(default_factory=default_worker_name)
    listen: bool = True
    on_slice: SliceObserver | None = None


class _Health:
    """Whether the database answers, so an outage is logged once and its end once."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.down = False
        self.delay = BACKOFF_MIN

    def failed(self, exc: BaseException) -> float:
        if not self.down:
            log.warning("database unavailable worker=%s; retrying with backoff: %s",
                        self.worker, one_line(exc))
        self.down = True
        delay, self.delay = self.delay, min(self.delay * 2, BACKOFF_MAX)
        return delay

    def ok(self) -> None:
        if self.down:
            log.info("database reachable again worker=%s", self.worker)
        self.down, self.delay = False, BACKOFF_MIN


class WorkerPool:
    """Run `await pool.run()`; `pool.stop()` (SIGTERM) stops claiming, waits `grace`, then
    releases what still runs with its saved state. Idle slots wake on NOTIFY or poll."""

    def __init__(self, queue: TaskQueue, runs: Sequence[CapabilityRun],
                 config: WorkerConfig | None = None, *, dsn: str | None = None) -> None:
        if not runs:
            raise ValueError("a worker pool needs at least one capability")
        self.queue = queue
        self.runs = tuple(runs)
        self.config = config or WorkerConfig()
        self.name = self.config.name
        self.dsn = dsn or str(queue.pool.conninfo)
        self.stopping = Stopping()
        # The latest slices' reports (tests and diagnostics read them); older ones are
        # dropped, so a pool that runs for months does not grow without bound.
        self.reports: deque[SliceReport] = deque(maxlen=REPORTS_KEPT)
        self.slices = 0
        self.listener: Listener | None = None
        self._health = _Health(self.name)
        self._wakes = [asyncio.Event() for _ in range(self.config.concurrency)]
        self._running = 0

    def stop(self) -> None:
        """Begin a graceful stop (safe to call from a signal handler, more than once)."""
        if not self.stopping.requested.is_set():
            log.info("worker stopping name=%s running=%d grace=%gs", self.name, self._running,
                     self.config.grace)
        self.stopping.requested.set()
        self.wake()

    def wake(self) -> None:
        """Make idle slots try to claim now."""
        for event in self._wakes:
            event.set()

    async def run(self) -> None:
        caps = ",".join(r.capability for r in self.runs)
        log.info("worker started name=%s capabilities=%s concurrency=%d poll_interval=%gs",
                 self.name, caps, self.config.concurrency, self.config.poll_interval)
        listening = asyncio.create_task(self._listen()) if self.config.listen else None
        slots = [asyncio.create_task(self._slot(i), name=f"slot-{i}")
                 for i in range(self.config.concurrency)]
        try:
            await self.stopping.requested.wait()
            _, pending = await asyncio.wait(slots, timeout=self.config.grace)
            if pending:
                log.info("grace period over; releasing running tasks name=%s count=%d",
                         self.name, self._running)
                self.stopping.abort.set()
                # Slices release at once; a claim stuck on a dead database is given up.
                await asyncio.wait(pending, timeout=ABORT_WAIT)
        finally:
            for t in [*slots, *([listening] if listening else [])]:
                t.cancel()
            await asyncio.gather(*slots, *([listening] if listening else []),
                                 return_exceptions=True)
        log.info("worker stopped name=%s slices=%d", self.name, self.slices)

    async def _listen(self) -> None:
        wanted = {r.capability for r in self.runs}

        def on_notify(channel: str, payload: str | None) -> None:
            if payload is None or payload in wanted:
                self.wake()

        self.listener = Listener(self.dsn, [TASKS_CHANNEL], on_notify)
        await self.listener.run()

    async def _slot(self, index: int) -> None:
        wake = self._wakes[index]
        turn = index
        while not self.stopping.requested.is_set():
            wake.clear()
            try:
                claimed = await self._claim_next(turn)
            except TRANSIENT as exc:
                await self._idle(wake, self._health.failed(exc))
                continue
            except Exception:
                log.exception("claim failed worker=%s", self.name)
                await self._idle(wake, self.config.poll_interval)
                continue
            turn += 1
            if claimed is None:
                await self._idle(wake, self.config.poll_interval)
                continue
            await self._run(*claimed)

    async def _claim_next(self, turn: int) -> tuple[Task, CapabilityRun] | None:
        """Try each capability once, starting at a different one per turn (round robin)."""
        for k in range(len(self.runs)):
            run = self.runs[(turn + k) % len(self.runs)]
            task = await claim_one(self.queue, run, self.name)
            self._health.ok()
            if task is not None:
                return task, run
        return None

    async def _run(self, task: Task, run: CapabilityRun) -> None:
        self._running += 1
        started = time.monotonic()
        outcome = "crashed"
        try:
            report = await run_slice(self.queue, task, run, self.name, self.stopping)
            self.reports.append(report)
            self.slices += 1
            outcome = report.outcome
        except Exception:
            log.exception("slice crashed task=%s worker=%s", task.id, self.name)
        finally:
            self._running -= 1
            self._observe(run.capability, outcome, time.monotonic() - started)

    def _observe(self, capability: str, outcome: str, seconds: float) -> None:
        if self.config.on_slice is None:
            return
        try:
            self.config.on_slice(capability, outcome, seconds)
        except Exception:  # an observer's bug must not stop the slot
            log.exception("slice observer failed worker=%s", self.name)

    async def _idle(self, wake: asyncio.Event, delay: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), delay)
