"""The account page: who is signed in, how many sessions they have open, and "Sign out
everywhere" (which ends every one of them on the server)."""

from __future__ import annotations

from aiohttp import web

from bot.web.app import web_app
from bot.web.pages.base import EXT, context
from bot.web.render import as_json, html, wants_json
from bot.web.sessions import SESSION, Session


async def account_page(request: web.Request) -> web.Response:
    app = web_app(request)
    session: Session | None = request.get(SESSION)
    assert session is not None
    sessions = await app.store.session_count(session.account)
    if wants_json(request):
        return as_json({"account": session.account, "sessions": sessions})
    return html("account", context(request, "account", "Account", sessions=sessions))


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/account" + EXT, account_page)
