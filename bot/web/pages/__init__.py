"""The web inbox's pages: one module per page, each a handler and a template of that name."""

from __future__ import annotations

from aiohttp import web

from bot.web.app import WebApp
from bot.web.pages import (
    account,
    bulk,
    files,
    inbox,
    login,
    queue,
    signals,
    stream,
    task,
    tasks,
    welcome,
)


def install(webapp: WebApp, app: web.Application) -> None:
    """The web inbox on `app`: its checks and channel (`webapp`) and every page's routes."""
    webapp.setup(app, add_routes)


def add_routes(router: web.UrlDispatcher) -> None:
    for module in (login, inbox, tasks, bulk, task, queue, signals, files, stream, account,
                   welcome):
        module.add_routes(router)
