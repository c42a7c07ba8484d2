"""What the /healthz and /metrics server logs about requests it could not even parse: one
line each, without aiohttp's traceback, and at most a few a minute, so a port scanner or a
burst of garbage cannot flood the log. A `token=` value in the quoted request (a one-time
sign-in link's) and every registered secret are masked before the line is cut to length, so
not even a part of one is logged."""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import MutableMapping
from typing import Any

from aiohttp.http_exceptions import HttpProcessingError

from taskqueue.errors import printable
from taskqueue.redact import MASK, redact

# Lines about malformed requests per window; the rest are counted and said once.
LINES_PER_WINDOW = 5
WINDOW_SECONDS = 60.0
# A line quotes this much of the parser's complaint.
MAX_REASON_CHARS = 120
# A query or path parameter named token (a sign-in link's), up to the next separator.
_TOKEN = re.compile(r"(token=)[^\s&;#'\"\\]+", re.IGNORECASE)


def mask_tokens(text: str) -> str:
    """`text` with every `token=VALUE` shown as `token=[redacted]`."""
    return _TOKEN.sub(lambda m: m[1] + MASK, text)


class RequestLog(logging.LoggerAdapter[logging.Logger]):
    """aiohttp's server logger for our endpoints. A malformed request (aiohttp's
    HttpProcessingError: a bad request line, header or length) becomes one WARNING line;
    any other error keeps its traceback, since it is a bug of ours."""

    def __init__(self, logger: logging.Logger, *, lines: int = LINES_PER_WINDOW,
                 window: float = WINDOW_SECONDS) -> None:
        super().__init__(logger, {})
        self.lines, self.window = lines, window
        self._window_start = time.monotonic()
        self._said = self._held = 0

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        return msg, kwargs

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        exc = _exception(kwargs.get("exc_info"))
        if isinstance(exc, HttpProcessingError):
            self._malformed(str(msg) % args if args else str(msg), exc)
            return
        super().log(level, msg, *args, **kwargs)

    def _malformed(self, context: str, exc: HttpProcessingError) -> None:
        now = time.monotonic()
        if now - self._window_start >= self.window:
            if self._held:
                self.logger.warning("http: %d more malformed requests in the last %.0fs",
                                    self._held, now - self._window_start)
            self._window_start, self._said, self._held = now, 0, 0
        if self._said >= self.lines:
            self._held += 1
            return
        self._said += 1
        reason = redact(mask_tokens(printable(" ".join(
            (exc.message or type(exc).__name__).split()))))
        peer = context.rpartition(" from ")[2] if " from " in context else "?"
        self.logger.warning("http: malformed request from %s refused (%d): %s", peer,
                            exc.code, reason[:MAX_REASON_CHARS])


def _exception(exc_info: Any) -> BaseException | None:
    if isinstance(exc_info, BaseException):
        return exc_info
    if exc_info is True:
        return sys.exc_info()[1]
    if isinstance(exc_info, tuple) and len(exc_info) == 3:
        found: BaseException | None = exc_info[1]
        return found
    return None
