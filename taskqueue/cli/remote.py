"""A small client of a Signoff service's HTTP API (/api/v1/), for `signoff ask` and
`signoff mcp` on a machine with no database access: the token from SIGNOFF_TOKEN, JSON in
and out, the API's refusals as the CLI's errors. Standard library only."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

from taskqueue.errors import BadInput, Conflict, NotFound, SignoffError
from taskqueue.redact import secret_register
from taskqueue.runtime.backoff import Backoff
from taskqueue.store.work_models import NewAttachment

TOKEN_ENV = "SIGNOFF_TOKEN"
URL_ENV = "SIGNOFF_URL"
# One long-poll's wait (the API's most).
POLL_SECONDS = 60
# Connection errors while waiting are retried, jittered, first within about this long
# (seconds), then up to RETRY_MAX_SECONDS apart, until the timeout.
RETRY_SECONDS = 2.0
# The longest wait between tries while the service cannot be reached.
RETRY_MAX_SECONDS = 15.0
MAX_ANSWER_BYTES = 64 * 1024 * 1024


class Refused(SignoffError):
    """The service refused the token (401: missing, bad or revoked; 403: a scope missing)."""

    exit_code = 15


class Unreachable(SignoffError):
    """The service cannot be reached."""


def _error(status: int, body: Any) -> SignoffError:
    name = body.get("error") if isinstance(body, dict) else None
    message = body.get("message") if isinstance(body, dict) else None
    text = f"the service answered {status} {name or ''}: {message or ''}".strip()
    if status in (401, 403):
        return Refused(text)
    if status == 404:
        return NotFound(text)
    if status == 409:
        return Conflict(text)
    if status in (400, 413, 415):
        return BadInput(text)
    return Unreachable(text)


class RemoteQueue:
    """The calls `signoff ask` makes, against `url` with the token of SIGNOFF_TOKEN."""

    def __init__(self, url: str, token: str | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise BadInput(f"--url must start with http:// or https://, not {url[:60]!r}")
        token = token if token is not None else os.environ.get(TOKEN_ENV, "")
        if not token.strip():
            raise BadInput(f"set {TOKEN_ENV} to a token (`signoff token add NAME --scopes "
                           "ask` on the service's host) to ask through --url")
        secret_register(token)
        self.base = url.rstrip("/") + "/api/v1"
        self.token = token.strip()

    def _call(self, method: str, path: str, body: Any = None, timeout: float = 30
              ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json",
                     **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, _json(answer.read(MAX_ANSWER_BYTES))
        except urllib.error.HTTPError as exc:
            retry = exc.headers.get("Retry-After") if exc.headers else None
            found = _json(exc.read(MAX_ANSWER_BYTES))
            if exc.code == 429 and retry is not None:
                return 429, {"retry_after": float(retry)}
            raise _error(exc.code, found) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise Unreachable(f"cannot reach {self.base}: {reason}") from None

    async def call(self, method: str, path: str, body: Any = None, timeout: float = 30
                   ) -> Any:
        """The JSON answer; a 429 waits its Retry-After and tries again."""
        while True:
            status, found = await asyncio.to_thread(self._call, method, path, body, timeout)
            if status != 429:
                return found
            await asyncio.sleep(min(float(found["retry_after"]), 60))

    async def park(self, capability: str, question: str, *,
                           request: Any = None, attachments: Iterable[NewAttachment] = (),
                           expires_in: float | None = None,
                           required_approvals: int | None = None,
                           key: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"capability": capability, "question": question}
        for name, value in (("request", request), ("expires_in", expires_in),
                            ("required_approvals", required_approvals), ("key", key)):
            if value is not None:
                body[name] = value
        files = [{"filename": f.filename, "content_base64": base64.b64encode(f.data).decode()}
                 for f in attachments]
        if files:
            body["files"] = files
        found: dict[str, Any] = await self.call("POST", "/requests", body)
        return found

    async def wait(self, request_id: int, timeout: float | None) -> dict[str, Any]:
        """The request once decided, or as it is at `timeout` (None: no end); the wait
        outlives a restart of the service (a connection refused is tried again)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        # Jittered: many waiting clients must not all retry at once when the service is back.
        backoff = Backoff(RETRY_SECONDS / 2, RETRY_MAX_SECONDS)
        while True:
            left = POLL_SECONDS if deadline is None else max(deadline - time.monotonic(), 0)
            wait = min(POLL_SECONDS, left)
            try:
                found: dict[str, Any] = await self.call(
                    "GET", f"/requests/{int(request_id)}?wait={wait:.0f}", timeout=wait + 30)
            except Unreachable:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(backoff.next())
                continue
            backoff.reset()
            if found.get("status") != "needs_approval" or (
                    deadline is not None and time.monotonic() >= deadline):
                return found

    async def get(self, request_id: int) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("GET", f"/requests/{int(request_id)}?wait=0")
        return found


def _json(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None
