"""Signoff's exceptions: one base, one subclass per outcome the CLI maps to an exit code,
and the one place that turns an error into one line and that code."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

import psycopg

from taskqueue.redact import redact


class SignoffError(Exception):
    """Signoff failed."""

    exit_code = 1

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())


class BadInput(SignoffError):
    """The input is invalid."""


class AttachmentTooLarge(BadInput):
    """The attachment is larger than the limit."""


class ConfigError(BadInput):
    """The configuration is invalid."""


class DatabaseUnavailable(SignoffError):
    """The database cannot be reached."""


class ServerTooOld(DatabaseUnavailable):
    """The PostgreSQL server is older than the oldest version Signoff supports."""


class MigrationError(SignoffError):
    """The migrations cannot be applied."""


class SchemaTooNew(SignoffError):
    """This database was migrated by a newer Signoff: upgrade this signoff. Reads still work;
    deciding, claiming and parking are refused, nothing is written."""


class NothingToClaim(SignoffError):
    """Nothing to claim."""

    exit_code = 3


class LeaseLost(SignoffError):
    """Lease lost: this worker no longer holds this claim of the task."""

    exit_code = 4


class NotFound(SignoffError):
    """No such thing."""

    exit_code = 5


class TaskNotFound(NotFound):
    """No such task."""


class ApprovalNotFound(NotFound):
    """No such approval."""


class Conflict(SignoffError):
    """The task is not in a state that allows this call."""

    exit_code = 6


class AlreadyDecided(Conflict):
    """The approval was already decided."""

    def __init__(self, message: str | None = None, *, decided_by: str | None = None,
                 decision: str | None = None) -> None:
        super().__init__(message)
        self.decided_by = decided_by
        self.decision = decision


class NotAnApprover(Conflict):
    """The person is not among the capability's `approvers`: nothing was recorded."""


class AlreadyApproved(SignoffError):
    """This person already approved this request (four-eyes): an approve counts once per
    person; the request still waits for someone else. Exit 7, distinct from a conflict."""

    exit_code = 7

    def __init__(self, message: str | None = None, *, by: str = "", approved: int = 0,
                 required: int = 1) -> None:
        super().__init__(message)
        self.by, self.approved, self.required = by, approved, required


class SignatureRequired(SignoffError):
    """The capability counts only passkey-signed approves (signed_approvals): approve in the
    web inbox; nothing was recorded. Exit 8."""

    exit_code = 8

    def __init__(self, message: str | None = None, *, task_id: int = 0,
                 approval_id: int = 0, link: str | None = None) -> None:
        super().__init__(message)
        self.task_id, self.approval_id, self.link = task_id, approval_id, link


class AuditMismatch(SignoffError):
    """The audit chain or a live row it vouches for was changed, removed or inserted. Exit 9."""

    exit_code = 9


class ApprovalExpired(Conflict):
    """The approval has expired."""


# Errors that mean the database is away for now (a restart, a network blip): callers
# retry with backoff instead of failing the work.
TRANSIENT = (psycopg.OperationalError, psycopg.InterfaceError, DatabaseUnavailable)


# Bidi controls reorder what a reader sees; they are printable to Python but not to us.
BIDI = frozenset({"\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)),
                  *map(chr, range(0x2066, 0x206A))})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# The longest error line printed; longer ones (a server log quoted whole) are cut.
MAX_MESSAGE_CHARS = 2000


def printable(value: object) -> str:
    """Text safe for a terminal: control, format and bidi characters (newlines, escape
    sequences, NUL) shown as escapes such as \\n and \\x1b, never raw."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(ch if ch == " " or (ch.isprintable() and ch not in BIDI) else _escape(ch)
                   for ch in text)


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or ch in BIDI:
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ch


def one_line(exc: BaseException) -> str:
    """An error's first line (psycopg's last lines are generic hints); a connection to a
    multi-host URL that failed on every host names each host once, with its reason."""
    text = str(exc).strip()
    if attempts := host_failures(text):
        return "connection failed: " + "; ".join(f"{where}: {why}" for where, why in attempts)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """"; did you mean 'approve'?" for a close match of a mistyped word, else ""."""
    import difflib  # only on this error path: the CLI starts without it

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def human_time(value: datetime) -> str:
    """A moment as a person reads it in a message: to the second, in UTC (never a raw
    microsecond ISO stamp)."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


_ATTEMPT = re.compile(r"^- host: '([^']*)', port: '([^']*)'.*: ([^:]+)$")


def host_failures(text: str) -> list[tuple[str, str]]:
    """(host:port, reason) of each host psycopg tried, from its "Multiple connection
    attempts failed" message; [] for any other message."""
    if "Multiple connection attempts failed" not in text:
        return []
    found = [(f"{m[1]}:{m[2]}", m[3].strip()) for line in text.splitlines()
             if (m := _ATTEMPT.match(line.strip()))]
    return list(dict.fromkeys(found))


def error_line(exc: BaseException) -> str:
    """A Signoff error as one terminal-safe line: the whole message, with newlines and
    control characters a value from the database or the user may carry escaped, and every
    registered secret masked."""
    text = printable(redact(str(exc).strip()) or type(exc).__name__)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS - 1] + "…"


def run_main(main: Callable[[], int], prog: str = "signoff") -> int:
    """Run a command's body; an error becomes one line on stderr and its exit code."""
    try:
        return main()
    except SignoffError as exc:
        print(f"{prog}: {error_line(exc)}", file=sys.stderr)
        return exc.exit_code
    except psycopg.Error as exc:
        # A value the database refuses or a server that went away mid-call: still one
        # line and exit 1, as the contract promises.
        print(f"{prog}: database error: {printable(redact(one_line(exc)))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
