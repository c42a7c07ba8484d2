"""Sign in and out: a rate-limited password check, then a signed session cookie."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from bot.web.app import public, web_app
from bot.web.pages.base import context
from bot.web.passwords import dummy_hash, verify_password
from bot.web.render import html
from bot.web.sessions import PRE, PRE_COOKIE, SESSION_COOKIE, new_pre_session
from bot.web.store import NAME_RULE

log = logging.getLogger("signoff.web.login")


def _next(value: object) -> str:
    """Where to go after signing in: a path on this site only."""
    if isinstance(value, str) and value.startswith("/") and not value.startswith(("//", "/\\")):
        return value[:500]
    return "/"


def _secure(request: web.Request) -> bool:
    return request.secure or web_app(request).settings.secure_cookies


@public
async def login_page(request: web.Request) -> web.StreamResponse:
    return await render_login(request)


async def render_login(request: web.Request, *, status: int = 200, error: str | None = None,
                       name: str = "") -> web.Response:
    """The sign-in form, with a pre-session cookie its CSRF token is bound to."""
    pre = request.cookies.get(PRE_COOKIE)
    if not pre or len(pre) > 100:
        pre = new_pre_session()
    request[PRE] = pre
    has_accounts = await web_app(request).store.account_count() > 0
    response = html("login", context(request, "login", "Sign in", error=error, name=name,
                                     next=_next(request.query.get("next")),
                                     has_accounts=has_accounts), status=status)
    response.set_cookie(PRE_COOKIE, pre, httponly=True, samesite="Strict", path="/",
                        secure=_secure(request))
    return response


@public
async def login_post(request: web.Request) -> web.StreamResponse:
    app = web_app(request)
    form = await request.post()
    name, password = str(form.get("name", ""))[:64], str(form.get("password", ""))
    address = request.remote or "?"
    wait = app.limiter.retry_after(name, address)
    if wait > 0:
        log.warning("web sign-in refused: too many attempts account=%r address=%s", name,
                    address)
        response = await render_login(request, status=429, name=name, error=(
            f"Too many failed attempts; try again in {int(wait) + 1} s."))
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    account = await app.store.account_get(name) if NAME_RULE.match(name) else None
    stored = account.password_hash if account and account.password_hash else dummy_hash()
    ok = await asyncio.to_thread(verify_password, password, stored)
    if not ok or account is None:
        app.limiter.failed(name, address)
        log.warning("web sign-in failed account=%r address=%s", name, address)
        return await render_login(request, status=401, name=name,
                                error="Wrong name or password.")
    app.limiter.succeeded(name)
    await app.store.account_logged_in(account.name)
    assert app.signer is not None
    log.info("web sign-in account=%s address=%s", account.name, address)
    response = web.HTTPSeeOther(_next(form.get("next")))
    response.set_cookie(SESSION_COOKIE, app.signer.session_cookie(account.name), httponly=True,
                        samesite="Strict", path="/", secure=_secure(request),
                        max_age=int(app.signer.lifetime))
    raise response


async def logout(request: web.Request) -> web.StreamResponse:
    response = web.HTTPSeeOther("/login")
    response.del_cookie(SESSION_COOKIE, path="/")
    raise response


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/login", login_page)
    router.add_post("/login", login_post)
    router.add_post("/logout", logout)
