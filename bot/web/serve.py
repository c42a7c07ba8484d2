"""`signoff web`: the web inbox and the HTTP API on their own listener (plain HTTP, or TLS
with a certificate), until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl
from collections.abc import Callable, Iterator

from aiohttp import web

from bot.api.store import migrate_tokens
from bot.web.app import WebApp
from bot.web.firstlink import base_url, say_link_once
from bot.web.pages import install
from bot.web.part import refuse_without_accounts
from bot.web.settings import from_config
from bot.web.store import migrate_accounts
from taskqueue import (
    Config,
    ConfigError,
    TaskQueue,
    describe_dsn,
    migrate,
    parse_listen,
    resolve_dsn,
)

log = logging.getLogger("signoff.web")


def mount_api(queue: TaskQueue, config: Config, app: web.Application) -> None:
    """The HTTP API beside the inbox (unless `[api] enabled = false`); its routes
    read their own bodies within the queue's `[limits]`."""
    from bot.api.part import api_app
    from bot.api.routes import install as install_api

    queue.limits = config.limits
    api = api_app(queue, config)
    if api is not None:
        install_api(api, app)


def tls_context(certfile: str | None, keyfile: str | None) -> ssl.SSLContext | None:
    if not certfile:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load the TLS certificate {certfile}: {exc}") from None
    return context


async def serve(config: Config, listen: str, *, certfile: str | None = None,
                keyfile: str | None = None, ready: asyncio.Event | None = None,
                stop: asyncio.Event | None = None,
                listening: Callable[[], None] | None = None) -> int:
    """Serve until `stop` is set (or a signal comes); 0 after a clean stop. A signal is
    heard from the start: one that comes while it starts (migrating, connecting) ends the
    start before it listens. `listening` is called once it listens, before it says where."""
    stop = stop or asyncio.Event()
    with _signals_set(stop):
        return await _serve(config, listen, certfile, keyfile, ready, stop, listening)


async def _serve(config: Config, listen: str, certfile: str | None, keyfile: str | None,
                 ready: asyncio.Event | None, stop: asyncio.Event,
                 listening: Callable[[], None] | None) -> int:
    try:
        host, port = parse_listen(listen)
    except ValueError as exc:
        raise ConfigError(f"--listen: {exc}") from None
    context = tls_context(certfile, keyfile)
    dsn = resolve_dsn()
    await migrate(dsn)
    await migrate_accounts(dsn)
    await migrate_tokens(dsn)
    log.info("database: %s", describe_dsn(dsn))
    async with TaskQueue.connect(dsn, max_size=8) as queue:
        webapp = WebApp(queue, from_config(config), signal_config=config.signals)
        token = await refuse_without_accounts(webapp.store, host, port)
        app = web.Application(client_max_size=1024 * 1024)
        install(webapp, app)
        mount_api(queue, config, app)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=5)
        await runner.setup()
        try:
            if stop.is_set():
                log.info("signoff web: stopped while starting, before it listened")
                return 0
            site = web.TCPSite(runner, host, port, ssl_context=context)
            try:
                await site.start()
            except OSError as exc:
                raise ConfigError(f"cannot listen on {host}:{port} "
                                  f"({exc.strerror or exc})") from None
            scheme = "https" if context else "http"
            # The port the socket got: `--listen 127.0.0.1:0` asks the system for a free one.
            port = next((a[1] for a in runner.addresses), port)
            if listening is not None:
                listening()
            log.info("signoff web: serving on %s://%s:%d", scheme, host, port)
            if token is not None:  # no account yet: the link that makes the first one
                say_link_once(log, base_url(host, port, scheme), token)
            if ready is not None:
                ready.set()
            await stop.wait()
        finally:
            await runner.cleanup()
    return 0


@contextlib.contextmanager
def _signals_set(stop: asyncio.Event) -> Iterator[None]:
    """SIGTERM and SIGINT set `stop` while the block runs (where the loop can hear them:
    the main thread of a Unix process)."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        yield
    finally:
        for sig in signals:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
