"""What the CLI reads from its user: JSON options, JSONL batches and attachment files, each
bounded by the queue's limits before it is parsed or held in memory."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from taskqueue.config.location import config_path
from taskqueue.errors import AttachmentTooLarge, BadInput
from taskqueue.store.checks import MAX_INT_DIGITS, Limits, check_json

if TYPE_CHECKING:
    from taskqueue.config.model import Config
    from taskqueue.store.work_models import NewAttachment

# JSON text may be longer than its compact form (spaces, \u escapes of one byte); text past
# this many times the limit cannot fit and is refused before it is parsed.
TEXT_FACTOR = 6
_CHUNK = 1024 * 1024


def cli_config(path: str | None = None) -> Config | None:
    """The config file (`path`, else $SIGNOFF_CONFIG) read and checked, its handlers not
    imported; None when no file is named. A command that needs only the limits or the
    people then never loads the config's machinery (issue 44's CLI start-up)."""
    if config_path(path) is None:
        return None
    from taskqueue.config.settings import load_config

    return load_config(path, imports=False)


def config_limits(config: Config | None) -> Limits:
    """The config's `[limits]`, or the defaults without one."""
    return config.limits if config is not None else Limits()


def cli_limits() -> Limits:
    """The `[limits]` of the config file ($SIGNOFF_CONFIG), else the defaults."""
    return config_limits(cli_config())


def parse_json(text: str | None, what: str, limits: Limits, *, obj: bool = True) -> Any:
    """Parse a JSON option or line; BadInput names it (`--payload`, `line 3`)."""
    if text is None:
        return None
    if len(text) > TEXT_FACTOR * limits.max_json_bytes:
        raise BadInput(f"{what} is over the limit of {limits.max_json_bytes} bytes of JSON "
                       "(max_json_bytes)")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{what} is not valid JSON: {exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise BadInput(f"{what} is nested deeper than {limits.max_json_depth} levels "
                       "(max_json_depth)") from None
    except ValueError:  # Python's cap on the digits of a whole number it reads
        raise BadInput(f"{what} holds a number of more than {MAX_INT_DIGITS} digits") from None
    if obj and not isinstance(value, dict):
        raise BadInput(f"{what} must be a JSON object")
    check_json(value, what, limits)
    return value


def read_jsonl(source: str, limits: Limits) -> list[dict[str, Any]]:
    """One JSON object per non-blank line of a file (or - for stdin); BadInput names the
    first bad line. A line is read only up to what could fit, so /dev/zero is refused."""
    try:
        if source == "-":
            payloads = list(_payloads(sys.stdin, limits))
        else:
            with open(source, encoding="utf-8") as file:
                payloads = list(_payloads(file, limits))
    except OSError as exc:
        raise BadInput(f"cannot read {source}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{source} is not UTF-8 text") from None
    if not payloads:
        raise BadInput(f"{source} holds no payloads")
    return payloads


def _payloads(file: IO[str], limits: Limits) -> Iterator[dict[str, Any]]:
    most = TEXT_FACTOR * limits.max_json_bytes
    number = 0
    while line := file.readline(most + 1):
        number += 1
        if len(line) > most and not line.endswith("\n"):
            raise BadInput(f"line {number} is over the limit of {limits.max_json_bytes} bytes "
                           "of JSON (max_json_bytes)")
        if line.strip():
            yield parse_json(line, f"line {number}", limits)


def read_attachments(paths: list[str], limits: Limits) -> list[NewAttachment]:
    """Each file's bytes; only regular files, read no further than the limit allows."""
    from taskqueue.store.work_models import NewAttachment  # a command that attaches, alone

    return [NewAttachment(Path(name).name, read_file(name, limits.max_attachment_bytes))
            for name in paths]


def read_file(name: str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; BadInput otherwise.

    O_NONBLOCK keeps a FIFO from blocking the open; the read stops at limit + 1 bytes, so a
    device such as /dev/zero, or a file that grows, never fills memory."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise BadInput(f"cannot read attachment {name}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BadInput(f"attachment {name} is not a regular file")
    with os.fdopen(fd, "rb", buffering=0) as file:
        data = bytearray()
        while len(data) <= limit and (chunk := file.read(min(_CHUNK, limit + 1 - len(data)))):
            data += chunk
    if len(data) > limit:
        raise AttachmentTooLarge(f"attachment {name} is over the limit of {limit} bytes "
                                 "(max_attachment_bytes)")
    return bytes(data)
