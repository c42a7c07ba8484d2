"""The first account, made in the browser with the one-time link (bot/web/firstlink.py):
GET /welcome?token=T shows the form, POST /welcome creates the account and signs it in.

A link that is unknown, used, expired, or opened once an account exists is refused (403,
the same page for each, so a guess learns nothing). Name and password follow the rules of
`signoff web user add`; a form with a mistake keeps the link unused.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from bot.web.app import public, web_app
from bot.web.firstlink import MAX_TOKEN_CHARS, PATH, token_hash
from bot.web.pages.base import context
from bot.web.passwords import check_password, hash_password
from bot.web.render import html
from bot.web.sessions import PRE, PRE_COOKIE, new_pre_session
from bot.web.store import check_account_name
from taskqueue import BadInput

log = logging.getLogger("signoff.web.welcome")

REFUSED = ("This sign-in link does not work (any more): it works once, for 15 minutes, and "
           "only while no account exists.")
ACCOUNTS_EXIST = "An account exists already: sign in with it."


def _secure(request: web.Request) -> bool:
    return request.secure or web_app(request).settings.secure_cookies


def _token(value: object) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= MAX_TOKEN_CHARS:
        return value
    return None


async def _form(request: web.Request, token: str, *, status: int = 200,
                error: str | None = None, name: str = "") -> web.Response:
    """The form, with the pre-session cookie its CSRF token is bound to; never cached."""
    pre = request.cookies.get(PRE_COOKIE)
    if not pre or len(pre) > 100:
        pre = new_pre_session()
    request[PRE] = pre
    response = html("welcome", context(request, "welcome", "Create your account",
                                       token=token, error=error, name=name), status=status)
    response.set_cookie(PRE_COOKIE, pre, httponly=True, samesite="Strict", path="/",
                        secure=_secure(request))
    response.headers["Cache-Control"] = "no-store"
    return response


async def _refused(request: web.Request, accounts: bool) -> web.Response:
    response = html("welcome", context(request, "welcome", "Sign-in link refused",
                                       refused=ACCOUNTS_EXIST if accounts else REFUSED),
                    status=403)
    response.headers["Cache-Control"] = "no-store"
    return response


@public
async def welcome_page(request: web.Request) -> web.StreamResponse:
    token = _token(request.query.get("token"))
    if token is None:
        return await _refused(request, False)
    usable, accounts = await web_app(request).store.first_link_open(token_hash(token))
    if not usable:
        log.warning("web: a refused one-time link was opened address=%s", request.remote)
        return await _refused(request, accounts)
    return await _form(request, token)


@public
async def welcome_post(request: web.Request) -> web.StreamResponse:
    app = web_app(request)
    form = await request.post()
    token = _token(form.get("token"))
    name = str(form.get("name", ""))[:64]
    password, again = str(form.get("password", "")), str(form.get("again", ""))
    if token is None or not (await app.store.first_link_open(token_hash(token)))[0]:
        log.warning("web: a refused one-time link was posted address=%s", request.remote)
        return await _refused(request, await app.store.account_count() > 0)
    try:
        check_account_name(name)
        check_password(password)
        if again != password:
            raise BadInput("the two passwords differ")
    except BadInput as exc:
        return await _form(request, token, status=400, error=str(exc), name=name)
    hashed = await asyncio.to_thread(hash_password, password)
    if not await app.store.first_link_use(token_hash(token), name, hashed):
        log.warning("web: a refused one-time link was posted address=%s", request.remote)
        return await _refused(request, await app.store.account_count() > 0)
    await app.store.account_logged_in(name)
    await app.sign_in(request, name)
    log.info("web: first account %s created with the one-time link address=%s", name,
             request.remote)
    raise web.HTTPSeeOther("/")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get(PATH, welcome_page)
    router.add_post(PATH, welcome_post)
