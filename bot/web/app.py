"""WebApp: the web inbox's routes, sign-in and CSRF checks, security headers, and the web
channel's loop, mounted on an aiohttp Application (the service's `[http]` listener, or
`signoff web`'s own).

Every page needs a signed-in person (a session kept in PostgreSQL, bot/web/sessions.py); every
POST needs the CSRF token bound to the session (the sign-in form's to a pre-session cookie).
Every answer carries a CSP with no inline script, `X-Content-Type-Options: nosniff` and a
no-framing rule; an answer that set its own CSP (an attachment's) keeps it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import warnings
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlencode

import aiohttp_session
from aiohttp import web

from bot.web.channel import WebChannel
from bot.web.evidence import PdfPages, Shown
from bot.web.live import Live
from bot.web.ratelimit import LoginLimiter
from bot.web.render import as_json, wants_json
from bot.web.sessions import PRE, PRE_COOKIE, SESSION, Session, SessionStorage, Signer
from bot.web.settings import WebSettings
from bot.web.store import AccountStore
from taskqueue import SignalConfig, TaskQueue
from taskqueue.queues.operator import OperatorQueue
from taskqueue.queues.people import PeopleQueue

log = logging.getLogger("signoff.web")
# aiohttp-session 2.12 keeps its session under plain string request keys: harmless, and not
# worth a line on every service's stderr.
warnings.filterwarnings("ignore", category=web.NotAppKeyWarning, module="aiohttp_session")

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
       "form-action 'self'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}
# What a page's script is told when its form is from a session that has ended.
SIGNED_OUT = "you were signed out: reload the page and sign in; nothing was decided"
# Largest form accepted (a note is at most a few KiB).
MAX_FORM_BYTES = 64 * 1024
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebApp:
    """`setup(app, add_routes)` adds the routes, the checks and the channel's loop to `app`
    (bot.web.pages.install passes the pages' routes, so this module imports no page)."""

    def __init__(self, queue: TaskQueue, settings: WebSettings | None = None, *,
                 signal_config: SignalConfig | None = None, telegram: bool = False) -> None:
        # The service's one queue, seen as the pages use it: people's part for what they
        # read and decide, and an operator's for the console's retry and cancel (task,
        # bulk); the channel sees it as the outbox.
        self.queue: PeopleQueue = queue
        self.operator: OperatorQueue = queue
        self.settings = settings or WebSettings()
        self.signal_config = signal_config
        self.telegram = telegram
        self.store = AccountStore(queue.pool)
        self.live = Live()
        self.channel = WebChannel(queue, self.live)
        self.pdfs = PdfPages()
        self.shown = Shown()
        self.limiter = LoginLimiter()
        self.signer: Signer | None = None
        # The one-time link's token (bot/web/firstlink.py) until it is printed, then None.
        self.first_token: str | None = None
        self.sessions = SessionStorage(self.store, secure=self.settings.secure_cookies)
        self._owned: set[Any] = set()
        self._task: asyncio.Task[None] | None = None
        self._signing_base: str | None = None

    def setup(self, app: web.Application,
              add_routes: Callable[[web.UrlDispatcher], None]) -> None:
        app[KEY] = self
        before = set(app.router.resources())
        add_routes(app.router)
        self._owned = set(app.router.resources()) - before
        app.middlewares.append(aiohttp_session.session_middleware(self.sessions))
        app.middlewares.append(self._middleware)
        app.on_startup.append(self._startup)
        app.on_shutdown.append(self._shutdown)
        app.on_cleanup.append(self._cleanup)

    async def _startup(self, app: web.Application) -> None:
        self.signer = Signer(await self.store.secret_ensure())
        await self.channel.register()
        self._task = asyncio.create_task(self.channel.run(), name="signoff-web-channel")
        role = ("a second approval channel beside Telegram" if self.telegram
                else "the approval channel (Telegram is off)")
        log.info("web: inbox served, %s", role)

    async def _shutdown(self, app: web.Application) -> None:
        self.live.close()  # open event streams end, so the server need not wait for them

    async def _cleanup(self, app: web.Application) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await self._checked(request, handler)
        except web.HTTPException as exc:
            _secured(exc.headers)
            raise
        _secured(response.headers)
        return response

    async def _checked(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        resource = request.match_info.route.resource
        if resource not in self._owned:
            return await handler(request)  # /healthz, /metrics, or nothing at all
        public = getattr(request.match_info.handler, "public", False)
        session = await self.session(request)
        request[SESSION] = session
        if request.method == "POST":
            await self._check_csrf(request, session)
        if session is None and not public:
            return self._sign_in_first(request)
        return await handler(request)

    async def session(self, request: web.Request) -> Session | None:
        """The signed-in person, when the cookie names a live session of an account that
        still stands (its row in `web_sessions`)."""
        stored = await aiohttp_session.get_session(request)
        if stored.new or "account" not in stored:
            return None
        return Session(str(stored["account"]), float(stored["issued"]), str(stored["sid"]))

    async def sign_in(self, request: web.Request, account: str) -> None:
        """Start a new session for `account`: its row and cookie are written with the
        answer (always a new id, so a cookie planted before the sign-in is worth nothing)."""
        stored = await aiohttp_session.new_session(request)
        stored["account"] = account

    async def sign_out(self, request: web.Request) -> None:
        """End this request's session on the server: its cookie is refused from now on."""
        (await aiohttp_session.get_session(request)).invalidate()

    async def sign_out_everywhere(self, account: str) -> int:
        """End every session of `account` (every browser); how many there were."""
        return await self.store.session_remove_all(account)

    def csrf_token(self, request: web.Request) -> str:
        """The token this request's forms carry."""
        assert self.signer is not None
        session: Session | None = request.get(SESSION)
        bound = session.sid if session else request.get(PRE) or request.cookies.get(
            PRE_COOKIE, "")
        return self.signer.csrf_token(bound)

    async def _check_csrf(self, request: web.Request, session: Session | None) -> None:
        assert self.signer is not None
        if (request.content_length or 0) > MAX_FORM_BYTES:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_FORM_BYTES,
                                                actual_size=request.content_length or 0)
        form = await request.post()
        token = request.headers.get("X-CSRF-Token") or form.get("csrf_token")
        bound = session.sid if session else request.cookies.get(PRE_COOKIE)
        if not self.signer.csrf_ok(bound, token if isinstance(token, str) else None):
            log.warning("web refused a post without a valid CSRF token path=%s address=%s",
                        request.path, request.remote)
            if request.headers.get("Accept", "").startswith("application/json"):
                # A page's script: most often a page left open across a sign-out.
                raise web.HTTPForbidden(text=json.dumps(
                    {"ok": False, "error": SIGNED_OUT, "signed_out": True}),
                    content_type="application/json")
            raise web.HTTPForbidden(text="This form has expired or did not come from this "
                                         "site (CSRF check). Reload the page and try again.")

    @staticmethod
    def _sign_in_first(request: web.Request) -> web.StreamResponse:
        if wants_json(request) or request.method != "GET":
            return as_json({"error": "sign in first"}, status=401)
        raise web.HTTPSeeOther("/login?" + urlencode({"next": request.rel_url.path_qs}))

    def decider(self, request: web.Request) -> str:
        """The name a decision made by this request is recorded under: the person's name
        from `[people.NAME] web_account`, else `web:<account>`."""
        session: Session | None = request.get(SESSION)
        assert session is not None
        return self.settings.people.get(session.account) or f"web:{session.account}"

    async def register_signing_link(self, request: web.Request) -> None:
        """Tell the queue where people sign approvals (this inbox's card address), so
        Telegram and the CLI can point there: `[web] public_url`, else the address this
        request came to (registered once per process and address)."""
        base = self.settings.public_url or f"{request.scheme}://{request.host}"
        if base != self._signing_base:
            await self.queue.signing_link_set("web", base + "/#approval-{approval_id}")
            self._signing_base = base


KEY = web.AppKey("signoff_web", WebApp)


def _secured(headers: MutableMapping[str, str]) -> None:
    """The security headers, without overwriting one the handler chose (an attachment's
    stricter `default-src 'none'; sandbox`)."""
    for name, value in SECURITY_HEADERS.items():
        headers.setdefault(name, value)


def public(handler: Handler) -> Handler:
    """Mark a handler as served without signing in (the sign-in page, static files)."""
    handler.public = True  # type: ignore[attr-defined]
    return handler


def web_app(request: web.Request) -> WebApp:
    return request.app[KEY]
