"""GET /healthz and GET /metrics over HTTP (aiohttp), for the service and `signoff worker`.

/healthz runs every named check (the database always; the caller adds its own, such as the
scheduler and the reaper, and the delivery channels' reports through add_channel) and
answers 200 when all pass, 503 naming the failing ones, as a small JSON body. A request the
server cannot parse is one log line at most (http/requestlog.py).
/metrics is Prometheus' text format: the QueueCollector's database
figures (read at scrape time, with a timeout) and the in-process handler durations. With a
`leader` callable (the service's Leadership), /healthz also says the process's "role",
leader or standby, and /metrics has `signoff_leader` 1/0.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Mapping, Sequence

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Gauge,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from taskqueue.errors import ConfigError, one_line
from taskqueue.http.listen import parse_listen
from taskqueue.http.requestlog import RequestLog
from taskqueue.maintenance.channels import ChannelReport
from taskqueue.maintenance.healthchecks import HealthCheck, database_check
from taskqueue.maintenance.metrics import SCRAPE_TIMEOUT, QueueCollector, SliceDurations
from taskqueue.maintenance.signals import SignalConfig
from taskqueue.queues.maintenance import MaintenanceQueue
from taskqueue.redact import redact

log = logging.getLogger("signoff.http")

# Each check gets this long (seconds) before it counts as failing.
CHECK_TIMEOUT = 5.0


class ObservabilityServer:
    """`await start()` serves on `listen` until `await stop()`; `observe_slice` is the
    WorkerConfig.on_slice observer feeding the handler-duration histogram."""

    def __init__(self, queue: MaintenanceQueue, listen: str, *,
                 signal_config: SignalConfig | None = None,
                 checks: Mapping[str, HealthCheck] | None = None,
                 timeout: float = SCRAPE_TIMEOUT,
                 sockets: Sequence[socket.socket] = (),
                 leader: Callable[[], bool] | None = None) -> None:
        self.host, self.port = parse_listen(listen)
        # Bound ahead by bind_listen (start serves them), else bound by start itself.
        self.sockets = list(sockets)
        self.registry = CollectorRegistry(auto_describe=False)
        self.collector = QueueCollector(queue, signal_config, timeout=timeout)
        self.registry.register(self.collector)
        # The standard process_* and python_* figures every Prometheus user expects.
        for standard in (ProcessCollector, PlatformCollector, GCCollector):
            standard(registry=self.registry)
        self.durations = SliceDurations(self.registry)
        self.observe_slice = self.durations.observe
        self.leader = leader
        if leader is not None:
            Gauge("signoff_leader", "1 while this process is the leader among the services "
                  "on its database, 0 while it stands by", registry=self.registry,
                  ).set_function(lambda: 1 if leader() else 0)
        self.checks: dict[str, HealthCheck] = {"database": database_check(queue),
                                               **(checks or {})}
        self.request_log = RequestLog(logging.getLogger("signoff.http.requests"))
        self.check_timeout = timeout
        self._scrape = asyncio.Lock()
        self._runner: web.AppRunner | None = None
        self._mounts: list[Callable[[web.Application], None]] = []

    def mount(self, setup: Callable[[web.Application], None]) -> None:
        """Let another part add its routes, middlewares and start-up or clean-up hooks to
        the server's application; called before `start()`."""
        self._mounts.append(setup)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        for setup in self._mounts:
            setup(app)
        self._runner = web.AppRunner(app, access_log=None, logger=self.request_log)
        await self._runner.setup()
        if self.sockets:
            for sock in self.sockets:
                await web.SockSite(self._runner, sock).start()
            self.port = self.sockets[0].getsockname()[1]
            self.sockets = []  # the server owns them now
        else:
            await self._start_tcp(self._runner)
        log.info("http: serving /healthz and /metrics on %s:%d", self.host, self.port)

    async def _start_tcp(self, runner: web.AppRunner) -> None:
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self.stop()
            raise ConfigError(f"cannot serve /healthz and /metrics on {self.host}:"
                              f"{self.port} ({exc.strerror or exc})") from None
        server = site._server
        if self.port == 0 and server is not None:  # an ephemeral port (tests)
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    def add_channel(self, channel: ChannelReport) -> None:
        """Fail /healthz, under the channel's name, while it reports a problem."""
        async def check() -> str | None:
            return channel.problem()
        self.checks[channel.name] = check

    async def stop(self) -> None:
        for sock in self.sockets:  # bound, never served: a start-up that failed later
            sock.close()
        self.sockets = []
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def health(self) -> dict[str, str]:
        """Each check's result: "ok" or what is wrong."""
        checks = dict(self.checks)  # a channel may be added while the checks run
        results = await asyncio.gather(*(self._run_check(c) for c in checks.values()))
        return {name: problem or "ok" for name, problem in zip(checks, results, strict=True)}

    async def _run_check(self, check: HealthCheck) -> str | None:
        """The check's answer, masked: /healthz is read by whoever reaches the port."""
        try:
            async with asyncio.timeout(self.check_timeout):
                problem = await check()
        except TimeoutError:
            return f"no answer within {self.check_timeout:.0f}s"
        except Exception as exc:
            problem = one_line(exc) or type(exc).__name__
        return redact(problem) if problem else None

    async def _healthz(self, request: web.Request) -> web.Response:
        results = await self.health()
        failing = [name for name, result in results.items() if result != "ok"]
        body: dict[str, object] = {"status": "failing" if failing else "ok",
                                   "failing": failing, "checks": results}
        if self.leader is not None:
            body["role"] = "leader" if self.leader() else "standby"
        return web.json_response(body, status=503 if failing else 200)

    async def _metrics(self, request: web.Request) -> web.Response:
        async with self._scrape:  # one scrape's snapshot at a time
            await self.collector.refresh()
            text = generate_latest(self.registry)
        return web.Response(body=text, headers={"Content-Type": CONTENT_TYPE_LATEST})
