"""ApiApp: the HTTP API's routes under /api/v1/, and the one middleware every call passes:
no token in a URL, a live bearer token, its rate, its scope, then the handler, whose core
errors become the documented JSON refusals. Never logs a token, a query string or a body."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg
from aiohttp import web

from bot.api.bodies import Bounds
from bot.api.errors import ApiError, from_core, json_response
from bot.api.ratelimit import TokenBuckets
from bot.api.settings import ApiSettings
from bot.api.store import PREFIX, Token, TokenStore
from taskqueue import TRANSIENT, ApprovalWaker, SignoffError, TaskQueue, secret_register
from taskqueue.queues.asker import AskerQueue
from taskqueue.queues.people import PeopleQueue
from taskqueue.queues.worker import WorkerQueue

log = logging.getLogger("signoff.api")

BASE = "/api/v1"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Query parameters that would carry a credential: refused whatever their value.
CREDENTIAL_PARAMS = frozenset({"token", "access_token", "api_key", "apikey", "key",
                               "auth", "authorization", "bearer"})


@dataclass(frozen=True)
class Param:
    """A query parameter, for the OpenAPI document."""

    name: str
    schema: Mapping[str, Any]
    description: str


@dataclass(frozen=True)
class Route:
    """One operation: its method, its path under BASE (OpenAPI style), the scopes any of
    which lets a token in (none: public), and what the OpenAPI document says of it."""

    method: str
    path: str
    handler: Handler
    scopes: tuple[str, ...]
    summary: str
    body: Mapping[str, Any] | None = None
    query: tuple[Param, ...] = ()
    answers: Mapping[int, str] = field(default_factory=dict)
    multipart: bool = False

    @property
    def operation_id(self) -> str:
        return self.handler.__name__


class ApiApp:
    """`setup(app, routes)` adds the routes and the middleware to an aiohttp Application."""

    def __init__(self, queue: TaskQueue, settings: ApiSettings | None = None, *,
                 modes: Mapping[str, str] | None = None) -> None:
        # The API serves three callers, and each route sees the service's one queue as its
        # caller's part: a worker's, an asker's, or people's (what they read and decide).
        self.queue = queue
        self.worker: WorkerQueue = queue
        self.asker: AskerQueue = queue
        self.people: PeopleQueue = queue
        self.settings = settings or ApiSettings()
        # Each configured capability's mode: an ask of one that is not external is refused.
        self.modes = dict(modes or {})
        self.store = TokenStore(queue.pool)
        self.buckets = TokenBuckets(self.settings.rate_per_minute, self.settings.burst)
        self.routes: dict[Any, Route] = {}
        self.waker = ApprovalWaker.for_pool(queue.pool)

    @property
    def bounds(self) -> Bounds:
        limits = self.queue.limits
        return Bounds(limits.max_json_bytes, limits.max_attachment_bytes)

    def setup(self, app: web.Application, routes: list[Route]) -> None:
        app[KEY] = self
        for route in routes:
            path = BASE + route.path.replace("{id}", r"{id:\d+}")
            added = app.router.add_route(route.method, path, route.handler)
            self.routes[added] = route
        app.middlewares.append(self._middleware)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)

    async def _startup(self, app: web.Application) -> None:
        # Listening from the start: the first long-poll after a restart hears its decision
        # at once instead of at its once-a-second read.
        await self.waker.listen()

    async def _cleanup(self, app: web.Application) -> None:
        await self.waker.close()

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith(BASE + "/") and request.path != BASE:
            return await handler(request)
        route = self.routes.get(request.match_info.route)
        try:
            response = await self._checked(request, handler, route)
        except ApiError as exc:
            response = exc.response()
        token = request.get(TOKEN)
        log.info("api: %s %s -> %d token=%s", request.method,
                 route.path if route else "(no route)", response.status,
                 token.name if token else "-")
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    async def _checked(self, request: web.Request, handler: Handler,
                       route: Route | None) -> web.StreamResponse:
        if any(k.lower() in CREDENTIAL_PARAMS or v.startswith(PREFIX)
               for k, v in request.query.items()):
            raise ApiError(400, "token_in_url", "a token was sent in the URL: send it only in "
                           "the Authorization header, and revoke this one (URLs are logged "
                           "by proxies)")
        if route is None:
            return self._no_route(request)
        if route.scopes:
            token = await self._token(request)
            request[TOKEN] = token
            wait = self.buckets.take(token.name)
            if wait > 0:
                seconds = max(1, int(wait + 0.999))
                raise ApiError(429, "rate_limited", f"too many requests for token "
                               f"{token.name}; retry after {seconds} s",
                               headers={"Retry-After": str(seconds)})
            if not set(route.scopes) & set(token.scopes):
                raise ApiError(403, "forbidden", f"token {token.name} lacks the "
                               f"{route.scopes[0]} scope", scope=route.scopes[0])
        try:
            return await handler(request)
        except SignoffError as exc:
            raise from_core(exc) from None
        except TRANSIENT:
            raise ApiError(503, "database_unavailable", "the database cannot be reached; "
                           "try again", headers={"Retry-After": "5"}) from None
        except psycopg.Error as exc:
            log.warning("api: database error on %s: %s", route.path, type(exc).__name__)
            raise ApiError(500, "error", "the database refused the call") from None
        except (ApiError, web.HTTPException):
            raise
        except Exception as exc:  # a bug: one line, never the request's body or token
            log.error("api: %s on %s %s", type(exc).__name__, request.method, route.path)
            raise ApiError(500, "error", "the server failed; see its log") from None

    @staticmethod
    def _no_route(request: web.Request) -> web.StreamResponse:
        refused = request.match_info.http_exception
        if refused is not None and refused.status == 405:
            raise ApiError(405, "method_not_allowed", f"{request.method} is not taken here")
        raise ApiError(404, "not_found", "no such path in the API (see /api/v1/openapi.json)")

    async def _token(self, request: web.Request) -> Token:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        token = None
        if scheme.lower() == "bearer" and value.strip():
            token = await self.store.token_find(value.strip())
        if token is not None:
            # A live token is masked from now on in every log line and error of this
            # process, wherever it might show up (a malformed request quoted by aiohttp).
            secret_register(value.strip())
        else:
            raise ApiError(401, "unauthorized",
                           "send a live token as `Authorization: Bearer TOKEN`",
                           headers={"WWW-Authenticate": 'Bearer realm="signoff"'})
        return token


KEY = web.AppKey("signoff_api", ApiApp)
TOKEN = web.RequestKey("signoff_api_token", Token)


def api_of(request: web.Request) -> ApiApp:
    return request.app[KEY]


def token_of(request: web.Request) -> Token:
    token: Token = request[TOKEN]
    return token


def task_id(request: web.Request) -> int:
    return int(request.match_info["id"])


__all__ = ["ApiApp", "ApiError", "Param", "Route", "api_of", "json_response", "task_id",
           "token_of"]
