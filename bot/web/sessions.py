"""Sessions kept in PostgreSQL (`web_sessions`, through aiohttp-session) and the CSRF tokens
bound to them.

The cookie holds only a random token; the table holds its SHA-256, the account and when it
lapses. Signing out deletes the row, so a copy of the cookie is refused from then on;
"sign out everywhere", a new password and removing the account delete every row of the
account. A CSRF token is an HMAC of the session's id (or, before signing in, of a random
pre-session cookie), so a page from elsewhere cannot forge a form post.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web
from aiohttp_session import AbstractStorage
from aiohttp_session import Session as StoredSession

if TYPE_CHECKING:
    from bot.web.store import AccountStore

SESSION_COOKIE = "signoff_session"
PRE_COOKIE = "signoff_pre"
# How long a sign-in lasts (seconds).
SESSION_SECONDS = 12 * 3600
# A cookie longer than this is not one of ours (ours are 43 characters).
MAX_COOKIE_CHARS = 200


@dataclass(frozen=True)
class Session:
    """A signed-in person: account name, when the session began, and its id."""

    account: str
    issued: float
    sid: str


def session_id(token: str) -> str:
    """The row's key: the cookie's token hashed, so the table's rows cannot be replayed."""
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


class SessionStorage(AbstractStorage):
    """aiohttp-session's storage on the web's `web_sessions` table."""

    def __init__(self, store: AccountStore, *, secure: bool = False,
                 lifetime: int = SESSION_SECONDS) -> None:
        super().__init__(cookie_name=SESSION_COOKIE, max_age=lifetime, path="/",
                         httponly=True, samesite="Strict")
        self.store = store
        self.secure = secure
        self.lifetime = lifetime

    async def load_session(self, request: web.Request) -> StoredSession:
        token = self.load_cookie(request)
        if not token or len(token) > MAX_COOKIE_CHARS:
            return StoredSession(None, data=None, new=True, max_age=self.lifetime)
        row = await self.store.session_get(session_id(token))
        if row is None:  # signed out, lapsed, or never ours
            return StoredSession(None, data=None, new=True, max_age=self.lifetime)
        data = {"account": row["account"], "sid": row["id"],
                "issued": row["created_at"].timestamp()}
        return StoredSession(token, data={"created": int(data["issued"]), "session": data},
                             new=False, max_age=self.lifetime)

    async def save_session(self, request: web.Request, response: web.StreamResponse,
                           session: StoredSession) -> None:
        if session.empty:  # signed out: the row goes, and the cookie with it
            if session.identity:
                await self.store.session_remove(session_id(str(session.identity)))
            response.del_cookie(self.cookie_name, path="/")
            return
        if not session.new:
            return
        token = secrets.token_urlsafe(32)
        row = await self.store.session_add(session_id(token), str(session["account"]),
                                           self.lifetime)
        session["sid"], session["issued"] = row["id"], row["created_at"].timestamp()
        response.set_cookie(self.cookie_name, token, max_age=self.lifetime, path="/",
                            httponly=True, samesite="Strict",
                            secure=request.secure or self.secure)


class Signer:
    """Makes and checks CSRF tokens with the database's key."""

    def __init__(self, key: bytes) -> None:
        self.key = key

    def _mac(self, purpose: str, text: str) -> str:
        digest = hmac.new(self.key, f"{purpose}:{text}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

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
