"""The service (`python -m bot`): config, database, migrations, scheduler, workers, Telegram,
and on its `[http]` listener (127.0.0.1:8080 or a free port unless the config says where,
or "off") the web inbox, /healthz and /metrics. Once started it says in three lines what to
do next (bot/nextsteps.py).

Each part logs one line as it starts. The Telegram channel plugs in through one hook:
`bot.telegram.create_part(service)` returns an object with `async start()` and
`async stop()` (or None when Telegram is off). It is called once the queue, the scheduler
and the workers run, so it may use `service.queue`, `service.config` (its own table is
`service.config.sections["telegram"]`) and `service.scheduler.set_check("nudge_digest",
body)`. Its `stop()` is awaited on shutdown after the workers stopped and before the
database pool closes. A part that keeps a `health` (a taskqueue ChannelReport) is added to
/healthz under its name, and one whose `started` event is not set after `start()` (the Bot
API has not answered yet) is logged as retrying, not started.

With a listener, the web inbox (`bot.web.part.mount(service)`) adds its pages to the same
aiohttp application before it starts, unless `[web] enabled = false`, and so does the HTTP
API (`bot.api.part.mount(service)`, /api/v1/) unless `[api] enabled = false`.

Any number of services may share one database. One of them leads (a PostgreSQL
advisory lock held by the core's `Leadership`): only the leader long-polls Telegram and runs
the scheduler's leader-only entries (the nudge digest, the incident check, the pruner);
everything else (worker pools, outbox delivery, producers, ticks, the reaper, a webhook)
runs on all. A part with `async lead()` and `async follow()` is told each change; it starts
as a standby. On shutdown the service steps down and releases the lock first, so a standby
takes over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import signal
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from bot.nextsteps import say_next_steps
from bot.observe import (
    AUTO,
    bind_http,
    http_settings,
    listener_missing,
    observability,
    require_listener,
)
from bot.scheduler import ServiceScheduler
from taskqueue import (
    CapabilityConfig,
    CapabilityRun,
    Config,
    Leadership,
    Stopping,
    TaskQueue,
    WorkerConfig,
    WorkerPool,
    apply_capabilities,
    default_worker_name,
    describe_dsn,
    load_handler,
    migrate,
    resolve_dsn,
    wait_at_most,
)

if TYPE_CHECKING:
    from taskqueue import ObservabilityServer

log = logging.getLogger("signoff.service")

# start() waits this long (seconds) for the first answer to "do we lead?".
LEADERSHIP_WAIT = 10.0


class TelegramPart(Protocol):
    """What the Telegram part provides to the service."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


TelegramFactory = Callable[["Service"], "TelegramPart | None"]


def default_telegram(service: Service) -> TelegramPart | None:
    """`bot.telegram.create_part(service)`, when the Telegram package provides it."""
    try:
        module = importlib.import_module("bot.telegram")
    except ModuleNotFoundError as exc:
        if exc.name != "bot.telegram":
            raise
        module = None
    create = getattr(module, "create_part", None)
    if create is None:
        log.warning("telegram: not available (bot.telegram has no create_part)")
        return None
    part: TelegramPart | None = create(service)
    return part


async def migrate_channels(dsn: str) -> list[str]:
    """The delivery channels' own migrations (Telegram's message table, the web's accounts,
    the HTTP API's tokens)."""
    from bot.api.store import migrate_tokens
    from bot.telegram.store import migrate_messages
    from bot.web.store import migrate_accounts

    return ([f"telegram/{v}" for v in await migrate_messages(dsn)]
            + [f"web/{v}" for v in await migrate_accounts(dsn)]
            + [f"api/{v}" for v in await migrate_tokens(dsn)])


def check_channels(config: Config) -> None:
    """The delivery channels' settings, checked before anything is written (the Telegram
    channel's table and TELEGRAM_* variables, and that its webhook address can be bound)."""
    from bot.telegram.part import check_settings

    check_settings(config)
    if http_settings(config)[0] not in (None, AUTO):  # an explicit listener needs its extra
        require_listener(config)


class Service:
    """`await Service(config).run()` until SIGTERM/SIGINT, or `start()` and `stop()`."""

    def __init__(self, config: Config, *, dsn: str | None = None,
                 telegram: TelegramFactory | None = default_telegram) -> None:
        self.config = config
        self.dsn = dsn
        self.telegram_factory = telegram
        self.telegram: TelegramPart | None = None
        self.name = default_worker_name()
        self.stopping = Stopping()
        self.pools: list[WorkerPool] = []
        self.scheduler: ServiceScheduler | None = None
        self.http: ObservabilityServer | None = None
        self.leadership: Leadership | None = None
        self.web: object | None = None
        self._queue_cm: contextlib.AbstractAsyncContextManager[TaskQueue] | None = None
        self.queue: TaskQueue | None = None
        self._pool_runs: list[asyncio.Task[None]] = []
        self._http_sockets: list[socket.socket] = []
        self._http_listen: str | None = None
        self._stop_requested = asyncio.Event()
        self.stop_failures: list[str] = []

    async def start(self) -> None:
        """Check everything that can fail first (the channels' settings, the [http] address,
        bound now and served once the queue runs), then migrate, connect, write the caps
        and start the parts: a failed check leaves the database untouched."""
        cfg = self.config
        if self.telegram_factory is default_telegram:
            check_channels(cfg)
        self._http_sockets, self._http_listen = bind_http(self._listen(cfg))
        caps = ", ".join(f"{c.name}({c.mode})" for c in cfg.capabilities.values()) or "none"
        log.info("config: file=%s capabilities=%s timezone=%s", cfg.path or "(defaults)",
                 caps, cfg.timezone)
        dsn = self.dsn or resolve_dsn()
        log.info("database: %s", describe_dsn(dsn))
        applied = await migrate(dsn)
        applied += await migrate_channels(dsn)
        log.info("migrations: %s", "applied " + ", ".join(applied) if applied else "up to date")
        self._queue_cm = TaskQueue.connect(dsn, max_size=self._pool_size())
        self.queue = await self._queue_cm.__aenter__()
        self.leadership = Leadership.for_database(dsn, name=self.name,
                                                 on_change=self._lead_or_follow)
        await apply_capabilities(self.queue, cfg)
        runs = {c.name: await self._run_for(c) for c in cfg.capabilities.values()
                if c.mode != "external"}
        self._start_scheduler(runs)
        await self._start_http()
        self._start_pools(runs, dsn)
        await self._start_telegram()
        self.leadership.start()
        # A lone service polls once start() returns; a slow database does not hold it up.
        await wait_at_most(self.leadership.decided, LEADERSHIP_WAIT)
        log.info("service started name=%s", self.name)
        say_next_steps(self)

    @staticmethod
    def _listen(cfg: Config) -> str | None:
        """`[http] listen`; the default (auto) is skipped, in one line, where the listener's
        extra is not installed (a core-only install still runs its workers)."""
        listen = http_settings(cfg)[0]
        if listen == AUTO and (why := listener_missing(cfg)) is not None:
            log.info("http: no listener by default: %s", why)
            return None
        return listen

    def _pool_size(self) -> int:
        slots = sum(c.concurrency for c in self.config.capabilities.values() if c.mode == "pool")
        return 4 + slots * 2

    async def _run_for(self, cap: CapabilityConfig) -> CapabilityRun:
        assert self.queue is not None and cap.handler is not None
        lease = cap.lease_seconds or (await self.queue.capability_get(cap.name)).lease_seconds
        return CapabilityRun(cap.name, load_handler(cap.handler), float(lease),
                             cap.timeout_seconds)

    def _start_scheduler(self, runs: dict[str, CapabilityRun]) -> None:
        assert self.queue is not None
        sched = ServiceScheduler(self.queue, self.config, worker=f"{self.name}:tick",
                                 stopping=self.stopping)
        sched.is_leader = self.is_leader
        sched.add_reaper()
        sched.add_pruner()
        sched.add_incident_check()
        for name, run in runs.items():
            cap = self.config.capabilities[name]
            if cap.mode == "tick":
                sched.add_tick(run, cap.tick_minutes)
        sched.add_producers()
        sched.start()
        self.scheduler = sched
        log.info("scheduler: started jobs=%d reaper_every=%gmin", len(sched.jobs),
                 self.config.reaper_interval_minutes)

    async def _start_http(self) -> None:
        assert self.queue is not None
        self.http = observability(self.config, self.queue, self._scheduler_running,
                                  sockets=self._http_sockets, leader=self.is_leader,
                                  listen=self._http_listen)
        if self.http is None:
            log.info("http: off")
            return
        from bot.api.part import mount as mount_api  # the HTTP API, on the same listener
        from bot.web.part import mount  # the web inbox, on the same listener

        self.web = await mount(self)
        await mount_api(self)
        await self.http.start()

    def is_leader(self) -> bool:
        """Whether this service holds the leader's lock now."""
        return self.leadership is not None and self.leadership.is_leader

    async def _lead_or_follow(self, leader: bool) -> None:
        """Leadership's on_change: tell the parts that do the leader's work."""
        if self.telegram is not None:
            change = getattr(self.telegram, "lead" if leader else "follow", None)
            if change is not None:
                await change()

    def _scheduler_running(self) -> bool:
        return self.scheduler is not None and self.scheduler.scheduler.running

    def _start_pools(self, runs: dict[str, CapabilityRun], dsn: str) -> None:
        assert self.queue is not None
        on_slice = self.http.observe_slice if self.http else None
        for name, run in runs.items():
            cap = self.config.capabilities[name]
            if cap.mode != "pool":
                continue
            pool = WorkerPool(self.queue, [run], WorkerConfig(
                concurrency=cap.concurrency, poll_interval=self.config.poll_interval_seconds,
                grace=self.config.grace_seconds, name=self.name, on_slice=on_slice), dsn=dsn)
            self.pools.append(pool)
            self._pool_runs.append(asyncio.create_task(pool.run(), name=f"pool-{name}"))
        log.info("worker pool: %s", ", ".join(
            f"{p.runs[0].capability}x{p.config.concurrency}" for p in self.pools) or "none")

    async def _start_telegram(self) -> None:
        part = self.telegram_factory(self) if self.telegram_factory else None
        if part is None:
            log.info("telegram: off")
            return
        follow = getattr(part, "follow", None)
        if follow is not None:  # it polls once this service leads
            await follow()
        await part.start()
        self.telegram = part
        health = getattr(part, "health", None)  # a ChannelReport, when the part keeps one
        if health is not None and self.http is not None:
            self.http.add_channel(health)
        started = getattr(part, "started", None)
        if isinstance(started, asyncio.Event) and not started.is_set():
            log.warning("telegram: retrying (the Bot API has not answered yet); approvals "
                        "wait in the outbox")
        else:
            log.info("telegram: started")

    def request_stop(self) -> None:
        """Begin a graceful stop (the SIGTERM/SIGINT handler)."""
        self._stop_requested.set()

    async def stop(self) -> None:
        """Stop claiming, give running work the grace period, then close everything. A part
        that fails to stop is logged by name and the others still stop (`stop_failures`)."""
        if self._queue_cm is None:  # start-up stopped at a check: nothing ran, say nothing
            self._close_sockets()
            return
        log.info("service stopping")
        if self.leadership is not None:
            # First: the leader's work stops and a standby takes over while this one drains.
            await self._stop_part("leadership", self.leadership.stop())
        self.stopping.requested.set()
        for pool in self.pools:
            pool.stop()
        if self.scheduler is not None:
            await self._stop_part("scheduler", self.scheduler.stop(self.config.grace_seconds))
        if self._pool_runs:
            await asyncio.gather(*self._pool_runs, return_exceptions=True)
        if self.telegram is not None and await self._stop_part("telegram", self.telegram.stop()):
            log.info("telegram: stopped")
        if self.http is not None:
            await self._stop_part("http listener", self.http.stop())
            self.http = None
        self._close_sockets()
        if self._queue_cm is not None:
            await self._stop_part("database pool", self._queue_cm.__aexit__(None, None, None))
            self._queue_cm = self.queue = None
        if self.stop_failures:
            log.error("service stopped; these parts failed to stop: %s",
                      ", ".join(self.stop_failures))
        else:
            log.info("service stopped")

    async def _stop_part(self, part: str, stopping: Awaitable[object]) -> bool:
        """Await one part's stop; False (logged, and kept in `stop_failures`) when it raised,
        so one part's error never leaves the parts after it running."""
        try:
            await stopping
        except Exception:
            log.exception("service: stopping the %s failed", part)
            self.stop_failures.append(part)
            return False
        return True

    def _close_sockets(self) -> None:
        for sock in self._http_sockets:  # bound, never served when start-up failed
            sock.close()
        self._http_sockets = []

    async def run(self) -> int:
        """Start, wait for SIGTERM or SIGINT, stop; 0 after a clean stop, 1 when a part
        failed to stop (each logged by name)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        try:
            await self.start()
            await self._stop_requested.wait()
        finally:
            await self.stop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
        return 1 if self.stop_failures else 0
