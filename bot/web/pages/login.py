"""Sign in and out: a rate-limited password check, then a session kept on the server; sign
out ends it there (and "sign out everywhere" every session of the person)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from bot.web.app import public, web_app
from bot.web.pages.base import context
from bot.web.passwords import dummy_hash, hash_password, needs_rehash, verify_password
from bot.web.render import html
from bot.web.sessions import PRE, PRE_COOKIE, SESSION, Session, new_pre_session
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
    if needs_rehash(stored):  # an older scrypt hash becomes argon2id now the password is known
        upgraded = await asyncio.to_thread(hash_password, password)
        await app.store.account_hash_upgrade(account.name, stored, upgraded)
        log.info("web password hash upgraded to argon2id account=%s", account.name)
    await app.sign_in(request, account.name)
    log.info("web sign-in account=%s address=%s", account.name, address)
    raise web.HTTPSeeOther(_next(form.get("next")))


async def logout(request: web.Request) -> web.StreamResponse:
    """End this session on the server, then the cookie."""
    await web_app(request).sign_out(request)
    raise web.HTTPSeeOther("/login")


async def logout_everywhere(request: web.Request) -> web.StreamResponse:
    """End every session of the signed-in person, this one included."""
    app = web_app(request)
    session: Session | None = request.get(SESSION)
    assert session is not None
    ended = await app.sign_out_everywhere(session.account)
    await app.sign_out(request)
    log.info("web signed out everywhere account=%s sessions=%d", session.account, ended)
    raise web.HTTPSeeOther("/login")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/login", login_page)
    router.add_post("/login", login_post)
    router.add_post("/logout", logout)
    router.add_post("/logout/everywhere", logout_everywhere)
