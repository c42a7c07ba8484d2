"""Every route of the API, in the order the OpenAPI document lists them, and `install`."""

from __future__ import annotations

from aiohttp import web

from bot.api import asking, deciding, openapi, reading, working
from bot.api.app import ApiApp, Route

ROUTES: list[Route] = [*openapi.ROUTES, *asking.ROUTES, *deciding.ROUTES, *reading.ROUTES,
                       *working.ROUTES]


def install(api: ApiApp, app: web.Application) -> None:
    api.setup(app, ROUTES)
