"""The service's `[http]` table and its /healthz + /metrics server (the core's
ObservabilityServer) with the service's own health rules: the scheduler runs and the
reaper ran within two intervals (the database is always checked).

The core keeps `[http]` unparsed (`Config.sections["http"]`); it is checked here key by key.
Absent (or without `listen`): no server.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from taskqueue import Config, TaskQueue, parse_listen, reaper_check

if TYPE_CHECKING:
    from taskqueue import ObservabilityServer

_KEYS = {"listen", "scrape_timeout_seconds"}


def http_settings(config: Config) -> tuple[str | None, float]:
    """`[http] listen` (None: off) and the scrape timeout, checked with the file's lines."""
    c = config.checker()
    t = c.table({"http": config.sections.get("http", {})}, ("http",), _KEYS)
    listen: str | None = c.get(t, ("http", "listen"), "str")
    if listen is not None:
        try:
            parse_listen(listen)
        except ValueError as exc:
            raise c.error(("http", "listen"), str(exc)) from None
    timeout: float = c.get(t, ("http", "scrape_timeout_seconds"), "num", 5.0, 0.1, 300)
    return listen, float(timeout)


def scheduler_check(running: Callable[[], bool]) -> Any:
    """Fails while the service's scheduler is not running."""
    async def check() -> str | None:
        return None if running() else "the scheduler is not running"
    return check


def observability(config: Config, queue: TaskQueue, scheduler_running: Callable[[], bool],
                  sockets: Sequence[socket.socket] = (), *,
                  leader: Callable[[], bool] | None = None) -> ObservabilityServer | None:
    """The server for `config`'s `[http]` table (serving `sockets` when bound ahead), or
    None when it is off; `leader` says whether this service leads (the /healthz "role"
    and `signoff_leader`)."""
    listen, timeout = http_settings(config)
    if listen is None:
        return None
    from taskqueue import ObservabilityServer  # aiohttp: only with a listener

    checks = {"scheduler": scheduler_check(scheduler_running),
              "reaper": reaper_check(queue, config.reaper_interval_minutes * 60)}
    return ObservabilityServer(queue, listen, signal_config=config.signals, checks=checks,
                               timeout=timeout, sockets=sockets, leader=leader)
