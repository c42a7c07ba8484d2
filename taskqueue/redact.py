"""The process's secrets (tokens, passwords, API keys) and their masking in every text that
leaves it: log lines, error lines, task errors, chat messages.

Whoever reads a secret registers its value (`secret_register`, `secret_register_env`, or
`secret_register_dsn` for a database URL's password); `redact(text)` then shows each
registered value as MASK. `RedactingFilter` applies it to log records whatever logger wrote
them: message, arguments, exception and stack text. The core names no secret of its users:
the delivery channels and the handlers register their own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Mapping
from urllib.parse import quote, unquote, urlsplit

MASK = "[redacted]"
# Shorter values are not registered: they cannot be told apart from ordinary words, and
# masking every "abc" in every log line would hide more than it protects.
MIN_SECRET_CHARS = 4
# The variables libpq reads a password from, registered with any database URL.
_PG_ENV = ("PGPASSWORD",)
# Environment variables whose name says they hold a secret (..._TOKEN, ..._PASSWORD,
# ..._API_KEY, ..._SECRET, and the identifiers that name a signing key, ..._KEY_ID and
# ..._ISSUER_ID as App Store Connect's and cloud keys have): secret_register_environment()
# masks them all, whoever reads them and whether or not their reader was loaded yet.
SECRET_NAME = re.compile(r"(TOKEN|PASSWORD|PASSWD|PASSPHRASE|SECRET|_KEY|_KEY_ID|_ISSUER_ID)$",
                         re.IGNORECASE)

_lock = threading.Lock()
_values: frozenset[str] = frozenset()
_pattern: re.Pattern[str] | None = None


def secret_register(*values: str | None) -> None:
    """Mask these values (and their URL-encoded spellings) from now on; empty, None and
    too-short values are ignored."""
    global _values, _pattern
    new = set()
    for value in values:
        if value and len(value.strip()) >= MIN_SECRET_CHARS:
            value = value.strip()
            new.update({value, quote(value, safe=""), quote(value, safe=":@")})
    with _lock:
        if new <= _values:
            return
        _values = _values | new
        # Longest first, so a secret containing another is masked whole.
        ordered = sorted(_values, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(v) for v in ordered))


def secret_register_env(*names: str, env: Mapping[str, str] | None = None) -> None:
    """Mask the values of these environment variables (those that are set)."""
    env = os.environ if env is None else env
    secret_register(*(env.get(name) for name in names))


def secret_register_environment(env: Mapping[str, str] | None = None) -> None:
    """Mask every environment variable whose name matches SECRET_NAME, and the password of
    DATABASE_URL."""
    env = os.environ if env is None else env
    secret_register_env(*(name for name in env if SECRET_NAME.search(name)), env=env)
    secret_register_dsn(env.get("DATABASE_URL"))


def secret_register_dsn(dsn: str | None) -> None:
    """Mask the password of a libpq connection string (URL or key=value) and PGPASSWORD."""
    secret_register_env(*_PG_ENV)
    if dsn:
        secret_register(*_dsn_passwords(dsn))


def _dsn_passwords(dsn: str) -> list[str | None]:
    """The password as libpq reads it, and as written in a URL (percent-encoded or not)."""
    import psycopg  # here, so `import taskqueue` (which binds `redact` at once) stays light
    from psycopg.conninfo import conninfo_to_dict

    found: list[str | None] = []
    with contextlib.suppress(psycopg.Error):  # unparsable: the URL's spelling still counts
        found.append(str(conninfo_to_dict(dsn).get("password") or ""))
    try:
        raw = urlsplit(dsn).password
    except ValueError:
        raw = None
    if raw:
        found += [raw, unquote(raw)]
    return found


def secrets_known() -> int:
    """How many spellings are registered (for tests and the start-up line)."""
    return len(_values)


def redact(text: str) -> str:
    """`text` with every registered secret shown as MASK."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


class RedactingFilter(logging.Filter):
    """Masks the registered secrets in a record before any handler formats it: the message
    (with its arguments merged in), the exception's text and the stack text."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the handler reports it, args unprinted
            record.msg, record.args = f"(unformattable log message {record.msg!r})", None
            message = record.msg
        masked = redact(message)
        if masked != message or record.args:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
