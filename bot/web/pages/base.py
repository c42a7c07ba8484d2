"""What every page's template gets: who is signed in, the CSRF token, the page's name."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.web.app import web_app
from bot.web.sessions import SESSION, Session

EXT = r"{ext:(\.json)?}"


def context(request: web.Request, page: str, title: str, **more: Any) -> dict[str, Any]:
    session: Session | None = request.get(SESSION)
    return {"page": page, "title": title, "user": session.account if session else None,
            "csrf_token": web_app(request).csrf_token(request), **more}


def int_arg(request: web.Request, name: str) -> int:
    """A numeric path part (the routes only match digits; this bounds the size)."""
    value = request.match_info[name]
    if len(value) > 18:
        raise web.HTTPNotFound()
    return int(value)


def back_to(target: str) -> web.HTTPSeeOther:
    return web.HTTPSeeOther(target)
