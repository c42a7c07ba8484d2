"""The service's `[http]` table and its /healthz + /metrics server (the core's
ObservabilityServer) with the service's own health rules: the scheduler runs and the
reaper ran within two intervals (the database is always checked), and the extra the
listener needs ('web' while the inbox is mounted on it, else 'metrics').

The core keeps `[http]` unparsed (`Config.sections["http"]`); it is checked here key by key.
`listen` is HOST:PORT (exactly there: a busy port stops the start), "off" (no server), or
"auto", the default when the key or the table is absent: DEFAULT_LISTEN, or the next free
port when that one is taken (a second service on the host), said in one line.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bot.extras import METRICS, require_web
from taskqueue import (
    Config,
    ConfigError,
    MissingExtra,
    bind_listen,
    parse_listen,
    reaper_check,
    require_extra,
)
from taskqueue.queues.maintenance import MaintenanceQueue

if TYPE_CHECKING:
    from taskqueue import ObservabilityServer

log = logging.getLogger("signoff.http")

_KEYS = {"listen", "scrape_timeout_seconds"}
AUTO, OFF = "auto", "off"
# Where "auto" serves: the web inbox's usual address (as `signoff web`'s default).
DEFAULT_LISTEN = "127.0.0.1:8080"
# "auto" tries the default port and the next ones, then any free port the system gives.
AUTO_TRIES = 10


def http_settings(config: Config) -> tuple[str | None, float]:
    """`[http] listen` (HOST:PORT, AUTO, or None for "off") and the scrape timeout, checked
    with the file's lines."""
    c = config.checker()
    t = c.table({"http": config.sections.get("http", {})}, ("http",), _KEYS)
    listen: str = c.get(t, ("http", "listen"), "str", AUTO)
    if listen.strip().lower() in (AUTO, OFF):
        listen = listen.strip().lower()
    else:
        try:
            parse_listen(listen)
        except ValueError:
            raise c.error(("http", "listen"), f'must be HOST:PORT such as 127.0.0.1:9464, '
                                              f'"auto" or "off", not {listen!r}') from None
    timeout: float = c.get(t, ("http", "scrape_timeout_seconds"), "num", 5.0, 0.1, 300)
    return (None if listen == OFF else listen), float(timeout)


def bind_http(listen: str | None) -> tuple[list[socket.socket], str | None]:
    """Bind `listen` now (the sockets, and the HOST:PORT they serve): None binds nothing;
    an explicit address raises ConfigError when it cannot be bound; AUTO takes the default,
    else a free port (one line says which), and never stops the start: when nothing at all
    can be bound it says so and serves nothing."""
    if listen is None:
        return [], None
    if listen != AUTO:
        return bind_listen(listen), listen
    host, port = parse_listen(DEFAULT_LISTEN)
    first: ConfigError | None = None
    for candidate in (*range(port, port + AUTO_TRIES), 0):
        try:
            sockets = bind_listen(f"{host}:{candidate}")
        except ConfigError as exc:
            first = first or exc
            continue
        got = f"{host}:{sockets[0].getsockname()[1]}"
        if candidate != port:
            log.info("http: %s is taken (%s); serving on %s instead", DEFAULT_LISTEN,
                     _reason(first), got)
        return sockets, got
    log.warning("http: serving nothing: %s", first)
    return [], None


def _reason(error: ConfigError | None) -> str:
    """The system's words from bind_listen's error (in its closing brackets)."""
    text = str(error or "")
    return text[text.rfind("(") + 1:].rstrip(")") if "(" in text else "busy"


def scheduler_check(running: Callable[[], bool]) -> Any:
    """Fails while the service's scheduler is not running."""
    async def check() -> str | None:
        return None if running() else "the scheduler is not running"
    return check


def observability(config: Config, queue: MaintenanceQueue, scheduler_running: Callable[[], bool],
                  sockets: Sequence[socket.socket] = (), *,
                  leader: Callable[[], bool] | None = None,
                  listen: str | None = None) -> ObservabilityServer | None:
    """The server for `config`'s `[http]` table (serving `sockets` when bound ahead, on
    `listen`, the address bind_http bound), or None when it is off; `leader` says whether
    this service leads (the /healthz "role" and `signoff_leader`)."""
    configured, timeout = http_settings(config)
    listen = listen or configured
    if listen is None or listen == AUTO:
        return None
    from taskqueue import ObservabilityServer  # aiohttp: only with a listener

    checks = {"scheduler": scheduler_check(scheduler_running),
              "reaper": reaper_check(queue, config.reaper_interval_minutes * 60)}
    return ObservabilityServer(queue, listen, signal_config=config.signals, checks=checks,
                               timeout=timeout, sockets=sockets, leader=leader)


def require_listener(config: Config) -> None:
    """The `[http]` listener's extra: 'web' while the inbox is mounted on it (`[web]
    enabled`, the default), else 'metrics' for /healthz and /metrics alone."""
    from bot.web.settings import from_config

    if from_config(config).enabled:
        require_web()
    else:
        require_extra("metrics", "the service's [http] listener (/healthz, /metrics)",
                      *METRICS)


def listener_missing(config: Config) -> str | None:
    """Why the default (`auto`) listener cannot serve here, in one line, or None: an
    install without the listener's extra runs without it rather than refusing to start."""
    try:
        require_listener(config)
    except MissingExtra as exc:
        return str(exc)
    return None
