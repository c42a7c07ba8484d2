"""`signoff worker`: run a worker pool for some capabilities until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from taskqueue.cli.app_dir import add_app_dir, use_app_dir
from taskqueue.cli.arguments import positive
from taskqueue.cli.commands import open_queue
from taskqueue.config.model import Config
from taskqueue.config.settings import apply_capabilities, load_config, publish_path
from taskqueue.errors import ConfigError
from taskqueue.extras import require_extra
from taskqueue.runtime.gcfreeze import freeze_startup_objects
from taskqueue.runtime.logsetup import LOG_FORMATS, LOG_LEVELS, info_unless_chosen

if TYPE_CHECKING:
    from taskqueue.http.server import ObservabilityServer
    from taskqueue.queues.whole import TaskQueue
    from taskqueue.runtime.handler import Handler
    from taskqueue.runtime.runner import CapabilityRun
    from taskqueue.runtime.worker import WorkerConfig, WorkerPool

log = logging.getLogger("signoff.worker")
# A worker warns at start when no reaper ran for this long (s): three of a service's default
# reaper intervals (5 minutes).
REAPER_QUIET = 15 * 60.0

# What --metrics-listen needs: the 'metrics' extra.
METRICS_MODULES = ("aiohttp", "prometheus_client")

WORKER_DESCRIPTION = (
    "Run a worker pool for one or more capabilities until SIGTERM or SIGINT. It has no "
    "--json: it prints no document, only log lines on stderr (one per task transition); "
    "read what it did with `signoff ls --json` or `signoff show ID --json`.")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `worker` on the `signoff` command line."""
    p = sub.add_parser("worker", help="run a worker pool for one or more capabilities",
                       description=WORKER_DESCRIPTION)
    configure(p)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--capability", action="append", required=True, metavar="CAP",
                   help="a capability to work on (repeat for several)")
    p.add_argument("--handler", metavar="MODULE:FUNCTION",
                   help="the handler (default: the capability's handler in the config file)")
    p.add_argument("--concurrency", type=int, metavar="N", help="slots (default 1)")
    p.add_argument("--config", metavar="FILE", help="config file (default $SIGNOFF_CONFIG)")
    p.add_argument("--name", help="the worker's name (default host:pid)")
    p.add_argument("--lease", type=positive, metavar="SECONDS",
                   help="lease length (default: the capability's setting)")
    p.add_argument("--timeout", type=positive, metavar="SECONDS",
                   help="per-slice timeout (default: the config's, else none)")
    p.add_argument("--poll-interval", type=positive, metavar="SECONDS",
                   help="how often to look for work without a notification (default 5)")
    p.add_argument("--grace", type=float, metavar="SECONDS",
                   help="how long running handlers get after SIGTERM (default 30)")
    p.add_argument("--metrics-listen", type=_listen, metavar="HOST:PORT",
                   help="serve /healthz and /metrics there (default: off)")
    add_log_options(p)
    add_app_dir(p)
    p.set_defaults(func=run)


def add_log_options(p: argparse.ArgumentParser) -> None:
    """--log-format and --log-level, for the long-running processes."""
    p.add_argument("--log-format", choices=LOG_FORMATS,
                   help="text (default) or json: one JSON object a line "
                        "(default $SIGNOFF_LOG_FORMAT)")
    p.add_argument("--log-level", choices=LOG_LEVELS,
                   help="debug, info (the worker's default), warning or error "
                        "(default $SIGNOFF_LOG_LEVEL)")


class _StopRequest:
    """SIGTERM or SIGINT, heard from the start of the command: one that comes while the
    worker starts (its handlers imported, the caps written) is kept, and the pool stops as
    soon as it is built, before its first claim; after that it is the pool's graceful stop.
    Heard only once the pool ran, such a signal killed the process (exit -15)."""

    def __init__(self) -> None:
        self.requested = False
        self.pool: WorkerPool | None = None

    def __call__(self) -> None:
        self.requested = True
        if self.pool is not None:
            self.pool.stop()

    def serve(self, pool: WorkerPool) -> None:
        """From now on a signal stops `pool`; one heard before stops it at once."""
        self.pool = pool
        if self.requested:
            pool.stop()


async def run(args: Any) -> int:
    """Run the pool; 0 after a graceful stop, also when asked to stop while starting."""
    loop = asyncio.get_running_loop()
    stop = _StopRequest()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    try:
        return await _start(args, stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def _start(args: Any, stop: _StopRequest) -> int:
    """Every start-up check comes before the first write: the config, the handlers, and the
    metrics address (bound here, served once the pool is built). Only then is the
    database opened (an embedded one is migrated) and the config's caps written."""
    info_unless_chosen(args.log_level)
    use_app_dir(args.app_dir)
    config = load_config(args.config)
    publish_path(config)
    if args.concurrency is not None and args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    for cap in args.capability:
        _handler(config, args, cap)
    if args.metrics_listen:
        require_extra("metrics", "--metrics-listen (/healthz and /metrics)", *METRICS_MODULES)
    from taskqueue.http.listen import bind_listen
    sockets = bind_listen(args.metrics_listen) if args.metrics_listen else []
    try:
        return await _serve(args, config, sockets, stop)
    finally:
        for sock in sockets:  # bound but never served when start-up failed
            sock.close()


async def _serve(args: Any, config: Config, sockets: list[socket.socket],
                 stop: _StopRequest) -> int:
    from taskqueue.runtime.worker import WorkerPool

    async with open_queue(max_size=(args.concurrency or 1) * 2 + 2) as q:
        q.schema_check_writable()  # before the caps are written
        await warn_without_reaper(q)
        # The caps this file sets for these capabilities hold here as in the service.
        await apply_capabilities(q, config, only=args.capability)
        runs = [await _capability_run(q, config, args, cap) for cap in args.capability]
        http = _metrics_server(q, config, args, sockets)
        pool = WorkerPool(q, runs, _worker_config(config, args, runs, http))
        if http is not None:
            http.checks["worker"] = _pool_check(pool)
            await http.start()
        stop.serve(pool)
        freeze_startup_objects()  # the handlers' modules are imported by now
        try:
            await pool.run()
        finally:
            if http is not None:
                await http.stop()
    return 0


def _metrics_server(q: TaskQueue, config: Config, args: Any,
                    sockets: list[socket.socket]) -> ObservabilityServer | None:
    """/healthz and /metrics on --metrics-listen (aiohttp, loaded only then), or None."""
    if not args.metrics_listen:
        return None
    from taskqueue.http.server import ObservabilityServer

    return ObservabilityServer(q, args.metrics_listen, signal_config=config.signals,
                               sockets=sockets)


async def warn_without_reaper(queue: TaskQueue) -> None:
    """A bare worker runs no reaper: say so once at start when none ran for a while, since
    a claim whose worker died (or whose reply was lost) then stays running."""
    latest = await queue.reaper_run_latest()
    age = None if latest is None else float(latest["age_seconds"])
    if age is not None and age <= REAPER_QUIET:
        return
    when = "has never run" if age is None else f"last ran {age / 60:.0f} min ago"
    log.warning("no reaper: the reaper %s on this database; a task whose worker died stays "
                "running until `signoff reap` or a service's reaper runs "
                "(docs/deployment.md, \"What runs the reaper\")", when)


def _listen(value: str) -> str:
    from taskqueue.http.listen import parse_listen

    try:
        parse_listen(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _pool_check(pool: WorkerPool) -> Any:
    async def check() -> str | None:
        return "the worker is stopping" if pool.stopping.requested.is_set() else None
    return check


def _handler(config: Config, args: Any, capability: str) -> Handler:
    cap = config.capability(capability)
    spec = args.handler or (cap.handler if cap else None)
    if not spec:
        raise ConfigError(f"no handler for capability {capability!r}: give --handler "
                          "module:function or a [capabilities.NAME] handler in the config")
    from taskqueue.runtime.handler import load_handler  # this command's own runtime

    return load_handler(spec)


async def _capability_run(queue: TaskQueue, config: Config, args: Any,
                          capability: str) -> CapabilityRun:
    cap = config.capability(capability)
    handler = _handler(config, args, capability)
    lease = args.lease or (cap.lease_seconds if cap else None)
    if lease is None:
        lease = (await queue.capability_get(capability)).lease_seconds
    timeout = args.timeout or (cap.timeout_seconds if cap else None)
    from taskqueue.runtime.runner import CapabilityRun
    return CapabilityRun(capability, handler, float(lease), timeout)


def _worker_config(config: Config, args: Any, runs: Sequence[CapabilityRun],
                   http: ObservabilityServer | None = None) -> WorkerConfig:
    from taskqueue.runtime.worker import WorkerConfig, default_worker_name

    concurrency = args.concurrency
    if concurrency is None:
        caps = [config.capability(r.capability) for r in runs]
        concurrency = max([c.concurrency for c in caps if c] or [1])
    return WorkerConfig(
        concurrency=concurrency,
        poll_interval=args.poll_interval or config.poll_interval_seconds,
        grace=config.grace_seconds if args.grace is None else args.grace,
        name=args.name or default_worker_name(),
        on_slice=http.observe_slice if http else None,
    )
