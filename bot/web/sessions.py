"""Signed session cookies and the CSRF tokens bound to them.

A session is `base64(json).hmac` signed with the database's key: who, when it was issued,
and a random id. It holds no password and is checked against the account on every request,
so removing an account or changing its password ends its sessions. A CSRF token is an
HMAC of the session id (or, before signing in, of a random pre-session cookie), so a page
from elsewhere cannot forge a form post.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from aiohttp import web

SESSION_COOKIE = "signoff_session"
PRE_COOKIE = "signoff_pre"
# How long a sign-in lasts (seconds).
SESSION_SECONDS = 12 * 3600


@dataclass(frozen=True)
class Session:
    """A signed-in person: account name, when the session began, and its id."""

    account: str
    issued: float
    sid: str


class Signer:
    """Makes and checks session cookies and CSRF tokens with one key."""

    def __init__(self, key: bytes, lifetime: float = SESSION_SECONDS) -> None:
        self.key = key
        self.lifetime = lifetime

    def _mac(self, purpose: str, text: str) -> str:
        digest = hmac.new(self.key, f"{purpose}:{text}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

    def session_cookie(self, account: str) -> str:
        body = json.dumps({"a": account, "i": time.time(), "s": secrets.token_urlsafe(18)},
                          separators=(",", ":"))
        encoded = base64.urlsafe_b64encode(body.encode()).decode("ascii").rstrip("=")
        return f"{encoded}.{self._mac('session', encoded)}"

    def session(self, cookie: str | None) -> Session | None:
        """The session a cookie holds, when its signature is ours and it has not lapsed."""
        if not cookie or len(cookie) > 1000 or "." not in cookie:
            return None
        encoded, mac = cookie.rsplit(".", 1)
        if not hmac.compare_digest(mac, self._mac("session", encoded)):
            return None
        try:
            body = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
            found = Session(str(body["a"]), float(body["i"]), str(body["s"]))
        except (ValueError, KeyError, TypeError):
            return None
        if not 0 <= time.time() - found.issued <= self.lifetime:
            return None
        return found

    def csrf_token(self, bound_to: str) -> str:
        """The token forms carry: bound to a session id or a pre-session cookie."""
        return self._mac("csrf", bound_to)

    def csrf_ok(self, bound_to: str | None, token: str | None) -> bool:
        if not bound_to or not token:
            return False
        return hmac.compare_digest(token, self.csrf_token(bound_to))


# Where a request keeps its session (None: not signed in) and its new pre-session value.
SESSION: web.RequestKey[Session | None] = web.RequestKey("signoff_session", object)  # type: ignore[arg-type]
PRE = web.RequestKey("signoff_pre", str)


def new_pre_session() -> str:
    """A random value for the pre-session cookie the sign-in form's token is bound to."""
    return secrets.token_urlsafe(18)
