"""Plugs the HTTP API into the service: mounted on its `[http]` listener unless
`[api] enabled = false`, with the configured capabilities' modes (an ask of a capability
whose worker runs in the service is refused)."""

from __future__ import annotations

import functools
from typing import Any

from bot.api.app import ApiApp
from bot.api.routes import install
from bot.api.settings import from_config
from taskqueue import Config, TaskQueue


def api_app(queue: TaskQueue, config: Config) -> ApiApp | None:
    """The ApiApp for `config`, or None when `[api] enabled = false`."""
    settings = from_config(config)
    if not settings.enabled:
        return None
    modes = {name: cap.mode for name, cap in config.capabilities.items()}
    return ApiApp(queue, settings, modes=modes)


async def mount(service: Any) -> ApiApp | None:
    """The ApiApp on `service.http` (a bot.service.Service), or None when there is no
    listener or the API is off."""
    if service.http is None:
        return None
    api = api_app(service.queue, service.config)
    if api is not None:
        service.http.mount(functools.partial(install, api))
    return api
