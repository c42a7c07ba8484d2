"""Passkeys in the web inbox: the relying party (the inbox's own address), the registration
challenge (an HMAC of the session, so any web process accepts it) and the options the
browser's WebAuthn calls take, built and checked with the `webauthn` package."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import time
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from bot.web.app import WebApp
from bot.web.sessions import SESSION, Session
from taskqueue import Approval

# A registration must finish within this many seconds of its options (two time slices).
REGISTER_SLICE = 300


def origin(app: WebApp, request: web.Request) -> str:
    """The inbox's origin: `[web] public_url` when set, else the address the browser used."""
    if app.settings.public_url:
        return app.settings.public_url
    return f"{request.scheme}://{request.host}"


def rp_id(app: WebApp, request: web.Request) -> str:
    """The relying party id: the origin's host name (no port)."""
    return urlsplit(origin(app, request)).hostname or ""


def why_not(app: WebApp, request: web.Request) -> str | None:
    """Why passkeys cannot be added at this address (None: they can)."""
    host = rp_id(app, request)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return None
    return (f"Passkeys cannot be added at {host}: browsers take a domain name (such as "
            "localhost) but no IP address as a passkey's domain; open this page by name, or "
            "set [web] public_url.")


def _session(request: web.Request) -> Session:
    session: Session | None = request.get(SESSION)
    assert session is not None
    return session


def register_challenge(app: WebApp, request: web.Request, at: float | None = None) -> bytes:
    """The registration challenge of this session for the current time slice."""
    assert app.signer is not None
    step = int((time.time() if at is None else at) // REGISTER_SLICE)
    token = app.signer.csrf_token(f"passkey-register:{_session(request).sid}:{step}")
    return hashlib.sha256(token.encode()).digest()


async def registration_options(app: WebApp, request: web.Request, person: str) -> str:
    from webauthn import generate_registration_options, options_to_json
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
    )

    mine = await app.queue.passkey_list(person)
    options = generate_registration_options(
        rp_id=rp_id(app, request), rp_name="Signoff", user_name=person,
        user_id=hashlib.sha256(person.casefold().encode()).digest()[:16],
        challenge=register_challenge(app, request),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=p.credential_id) for p in mine])
    return str(options_to_json(options))


def verify_registration(app: WebApp, request: web.Request, credential: Any) -> Any:
    """The verified registration (webauthn's), trying this and the previous time slice."""
    from webauthn import verify_registration_response
    from webauthn.helpers.exceptions import WebAuthnException

    now = time.time()
    problem = "no challenge"
    for at in (now, now - REGISTER_SLICE):
        try:
            return verify_registration_response(
                credential=credential, expected_challenge=register_challenge(app, request, at),
                expected_rp_id=rp_id(app, request), expected_origin=origin(app, request))
        except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
            problem = str(exc)[:200]
    raise web.HTTPBadRequest(text=json.dumps({"ok": False, "error":
                             f"the passkey was not registered: {problem}"}),
                             content_type="application/json")


async def signing_options(app: WebApp, request: web.Request, approval: Approval,
                          person: str) -> str:
    """What the browser signs to approve `approval`: its challenge and the person's keys."""
    from webauthn import generate_authentication_options, options_to_json
    from webauthn.helpers.structs import (
        PublicKeyCredentialDescriptor,
        UserVerificationRequirement,
    )

    from taskqueue import approval_challenge

    mine = await app.queue.passkey_list(person)
    options = generate_authentication_options(
        rp_id=rp_id(app, request), challenge=approval_challenge(approval.id, approval.request),
        allow_credentials=[PublicKeyCredentialDescriptor(id=p.credential_id) for p in mine],
        user_verification=UserVerificationRequirement.PREFERRED)
    return str(options_to_json(options))
