"""How a long-running Signoff process (`signoff ...`, `python -m bot`) sets up its logging:
one log format, every registered secret masked in every line, the HTTP clients' per-request
lines off, and log records that skip what that format never prints.

A worker writes one log line per task transition, two or more per task, so at thousands of
tasks a second the cost of each record shows in the worker's throughput."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping

from taskqueue.redact import RedactingFilter, secret_register_environment
from taskqueue.runtime.logjson import JsonFormatter

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
FORMAT_ENV, LEVEL_ENV = "SIGNOFF_LOG_FORMAT", "SIGNOFF_LOG_LEVEL"
# HTTP clients and servers that log each request (httpx logs every request's URL, a token in
# its path included, at INFO; urllib3 its connections at DEBUG): WARNING and up only, at
# every level the process runs at. A caller adds the loggers of its own libraries.
QUIET_LOGGERS = ("httpx", "httpcore", "hpack", "urllib3", "aiohttp.access", "aiohttp.client")


class LogFormatter(logging.Formatter):
    """logging.Formatter with the date and time text of `%(asctime)s` made once per second
    instead of once per record; the text is the same as the stock formatter's."""

    def __init__(self, fmt: str = LOG_FORMAT) -> None:
        super().__init__(fmt)
        self._second: int | None = None
        self._second_text = ""

    def formatTime(self, record: logging.LogRecord,
                   datefmt: str | None = None) -> str:
        if datefmt is not None or self.default_msec_format is None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        if second != self._second:
            self._second_text = time.strftime(self.default_time_format,
                                              self.converter(record.created))
            self._second = second
        return self.default_msec_format % (self._second_text, record.msecs)


def log_options(log_format: str | None, log_level: str | None, default_level: int,
                env: Mapping[str, str] | None = None) -> tuple[str, int]:
    """The format and level to log with: the option, else SIGNOFF_LOG_FORMAT /
    SIGNOFF_LOG_LEVEL, else text and `default_level`. A bad value raises ValueError."""
    env = os.environ if env is None else env
    fmt = (log_format or env.get(FORMAT_ENV) or "text").lower()
    if fmt not in LOG_FORMATS:
        raise ValueError(f"{FORMAT_ENV} must be one of {', '.join(LOG_FORMATS)}, not {fmt!r}")
    name = (log_level or env.get(LEVEL_ENV) or "").lower()
    if name and name not in LOG_LEVELS:
        raise ValueError(f"{LEVEL_ENV} must be one of {', '.join(LOG_LEVELS)}, not {name!r}")
    return fmt, logging.getLevelNamesMapping()[name.upper()] if name else default_level


def info_unless_chosen(log_level: str | None, env: Mapping[str, str] | None = None) -> None:
    """A long-running `signoff` command's default (`signoff worker`, `signoff web`): Signoff's
    own loggers at INFO, where the CLI logs warnings only, unless a level was chosen
    (`log_level` from `--log-level`, or SIGNOFF_LOG_LEVEL); `-v` already lowered the root's."""
    env = os.environ if env is None else env
    if logging.getLogger().level > logging.INFO and not (log_level or env.get(LEVEL_ENV)):
        logging.getLogger("signoff").setLevel(logging.INFO)


# psycopg_pool warns at every failed attempt to replace a connection (one a second while the
# server is away or full, store/reconnect.py); Signoff's own parts say it once per outage.
POOL_LOGGER = "psycopg.pool"


def configure_logging(level: int, log_format: str = "text", *, quiet: Iterable[str] = (),
                      errors_only: Iterable[str] = ()) -> None:
    """Log to stderr at `level`, in LOG_FORMAT or (`json`) as JsonFormatter's objects,
    unless the root logger has handlers already (then, as with logging.basicConfig,
    nothing changes).

    Every line passes the RedactingFilter (the secrets registered with taskqueue.redact
    are masked whatever logger wrote them; the environment's secret-named variables and
    DATABASE_URL's password are registered here); the loggers in QUIET_LOGGERS and `quiet`
    say only warnings and errors, those in `errors_only` (a server's access log, where a
    stranger's refused requests would land) only errors.
    The format prints no thread, process or source position, so records skip collecting
    them (the switches the logging HOWTO's "Optimization" section names); a worker's name
    carries its pid already. Someone else's logging set-up keeps them."""
    root = logging.getLogger()
    if root.handlers:
        return
    secret_register_environment()
    for name in (*QUIET_LOGGERS, *quiet):
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
    for name in (*errors_only, POOL_LOGGER):
        logging.getLogger(name).setLevel(max(level, logging.ERROR))
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else LogFormatter())
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
    root.setLevel(level)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # the HOWTO's documented switch for the source position
