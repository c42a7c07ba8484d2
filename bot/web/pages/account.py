"""The account page (`/account`): the signed-in person's passkeys, "Add a passkey" (a WebAuthn
registration in the browser) and removing one; how many sessions are open with "Sign out
everywhere" (templates/account_sessions.html); and the options a signed approve signs."""

from __future__ import annotations

import json
import logging

from aiohttp import web

from bot.web.app import web_app
from bot.web.pages.base import EXT, context, int_arg
from bot.web.passkeys import (
    origin,
    registration_options,
    rp_id,
    signing_options,
    verify_registration,
    why_not,
)
from bot.web.render import as_json, html, wants_json
from bot.web.sessions import SESSION, Session
from taskqueue import BadInput, NotFound

log = logging.getLogger("signoff.web.account")

MAX_LABEL = 60


async def account(request: web.Request) -> web.Response:
    app = web_app(request)
    session: Session | None = request.get(SESSION)
    assert session is not None
    person = app.decider(request)
    keys = await app.queue.passkey_list(person)
    sessions = await app.store.session_count(session.account)
    if wants_json(request):
        return as_json({"account": session.account, "sessions": sessions, "person": person,
                        "passkeys": [k.to_json() for k in keys]})
    await app.register_signing_link(request)
    return html("account", context(request, "account", "Account", person=person,
                                   passkeys=keys, why_not=why_not(app, request),
                                   rp_id=rp_id(app, request), sessions=sessions))


async def options(request: web.Request) -> web.Response:
    """The options `navigator.credentials.create()` takes (JSON)."""
    app = web_app(request)
    if (reason := why_not(app, request)) is not None:
        return as_json({"ok": False, "error": reason}, status=400)
    body = await registration_options(app, request, app.decider(request))
    return web.Response(text=body, content_type="application/json")


async def add(request: web.Request) -> web.Response:
    """A registration the browser made: verified, then stored under the person."""
    app = web_app(request)
    form = await request.post()
    try:
        credential = json.loads(str(form.get("credential", "")))
    except ValueError:
        return as_json({"ok": False, "error": "the credential is not JSON"}, status=400)
    label = str(form.get("label", "")).strip()[:MAX_LABEL] or None
    verified = verify_registration(app, request, credential)
    person = app.decider(request)
    try:
        key = await app.queue.passkey_add(
            person, bytes(verified.credential_id), bytes(verified.credential_public_key),
            rp_id=rp_id(app, request), sign_count=int(verified.sign_count), label=label)
    except BadInput as exc:
        return as_json({"ok": False, "error": str(exc)}, status=409)
    log.info("passkey added person=%s rp_id=%s origin=%s", person, key.rp_id,
             origin(app, request))
    return as_json({"ok": True, "passkey": key.to_json()})


async def remove(request: web.Request) -> web.Response:
    app = web_app(request)
    try:
        credential_id = bytes.fromhex(request.match_info["cid"])
    except ValueError:
        raise web.HTTPNotFound() from None
    if not await app.queue.passkey_remove(app.decider(request), credential_id):
        raise web.HTTPNotFound()
    log.info("passkey removed person=%s", app.decider(request))
    raise web.HTTPSeeOther("/account")


async def sign_options(request: web.Request) -> web.Response:
    """What the browser signs to approve this approval with the person's passkey (JSON)."""
    app = web_app(request)
    try:
        approval = await app.queue.approval_get(int_arg(request, "id"))
    except NotFound:
        return as_json({"ok": False, "error": "no such approval"}, status=404)
    body = await signing_options(app, request, approval, app.decider(request))
    return web.Response(text=body, content_type="application/json")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/account" + EXT, account)
    router.add_post("/account/passkeys/options", options)
    router.add_post("/account/passkeys", add)
    router.add_post(r"/account/passkeys/{cid:[0-9a-f]{2,2046}}/remove", remove)
    router.add_post(r"/approvals/{id:\d+}/sign-options", sign_options)
