"""Plugs the web inbox into the service: mounted on its `[http]` listener when `[web]` is
enabled (the default), refusing a non-loopback address while no account exists, and on
loopback with no account making the one-time link that creates the first one."""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

from bot.web.app import WebApp
from bot.web.firstlink import first_link_issue
from bot.web.pages import install
from bot.web.settings import from_config, is_loopback
from bot.web.store import AccountStore
from taskqueue import ConfigError

log = logging.getLogger("signoff.web")


async def refuse_without_accounts(store: AccountStore, host: str, port: int) -> str | None:
    """Raise ConfigError when `host` is reachable from elsewhere and nobody can sign in; on
    loopback with no account, a new one-time link's token (printed once by the caller with
    firstlink.say_link_once), else None."""
    if await store.account_count() > 0:
        return None
    if is_loopback(host):
        return await first_link_issue(store)
    raise ConfigError(
        f"the web inbox would listen on {host}:{port} with no account; add one with "
        "`signoff web user add NAME`, listen on 127.0.0.1, or set [web] enabled = false")


async def mount(service: Any) -> WebApp | None:
    """The WebApp on `service.http` (a bot.service.Service), or None when there is no
    listener or `[web] enabled = false`."""
    settings = from_config(service.config)
    if service.http is None or not settings.enabled:
        return None
    app = WebApp(service.queue, settings, signal_config=service.config.signals,
                 telegram=bool(os.environ.get("TELEGRAM_BOT_TOKEN")))
    # The token waits on the app until the service's next steps print it (bot/nextsteps.py).
    app.first_token = await refuse_without_accounts(app.store, service.http.host,
                                                    service.http.port)
    service.http.mount(functools.partial(install, app))
    return app
