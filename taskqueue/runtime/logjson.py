"""The JSON form of a log line (`--log-format json`): one object a line with the time in
ISO 8601, the level, the logger, the whole message, and each `key=value` pair of the
message as a field of its own.

The message is parsed, not trusted: it stays whole in `msg`, so a pair this parser reads
differently from a person loses nothing."""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime

# A pair's key: a word at a line's start or after white space, then `=`
# (`claimed task=42 capability=mail`); `url=/x?a=b` is one pair, not two.
_KEY = re.compile(r"(?<!\S)([A-Za-z_][A-Za-z0-9_.]*)=")
# Where an unquoted value ends: the white space before the next key, or a clause break
# (`worker=w1: lease lost`, `worker=w1; retrying`: what follows is prose, not the value),
# or the line's end. A value with spaces (`reason=lease lost`) runs on.
_VALUE_END = re.compile(r"\s+(?=[A-Za-z_][A-Za-z0-9_.]*=)|[:;](?=\s)|$", re.MULTILINE)
# A quoted value, `"..."` or a repr's `'...'` (a backslash escapes the quote), closed right
# before white space, punctuation or the line's end; a quote never closed is read unquoted.
_QUOTED = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\\n])*)\1(?=[\s.,;:!?)]|$)""")
_UNESCAPE = re.compile(r"\\([\\\"'])")
# Sentence punctuation after a value (`task=42.`, `task=42, retrying`) is not part of it.
_TRAILING = ".,;:!?"
# The object's own fields, which a pair of the message never replaces.
FIXED_FIELDS = frozenset({"ts", "level", "logger", "msg", "exc", "stack"})


def message_pairs(message: str) -> dict[str, str]:
    """The `key=value` pairs of a log message, in order; the first of a repeated key wins."""
    pairs: dict[str, str] = {}
    pos = 0
    while (key := _KEY.search(message, pos)) is not None:
        value, pos = _value_at(message, key.end())
        pairs.setdefault(key.group(1), value)
    return pairs


def _value_at(message: str, start: int) -> tuple[str, int]:
    """The value that starts at `start`, and where to look for the next key."""
    quoted = _QUOTED.match(message, start)
    if quoted is not None:
        return _UNESCAPE.sub(r"\1", quoted.group(2)), quoted.end()
    end = _VALUE_END.search(message, start)
    stop = end.start() if end is not None else len(message)
    value = message[start:stop].rstrip()
    # Punctuation alone (`key=...`) is the value; only punctuation after text is trimmed.
    return value.rstrip(_TRAILING) or value, max(stop, start + 1)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: `ts` (ISO 8601 with the UTC offset, milliseconds), `level`,
    `logger`, `msg` (the whole message), the message's pairs (strings), and `exc` (the
    traceback) and `stack` when the record has them. The time text is made once a second."""

    def __init__(self) -> None:
        super().__init__()
        self._second: int | None = None
        self._date = self._zone = ""

    def formatTime(self, record: logging.LogRecord,
                   datefmt: str | None = None) -> str:
        second = int(record.created)
        if second != self._second:
            # Local time with its offset, the instant the text format's time shows.
            text = datetime.fromtimestamp(second).astimezone().isoformat(timespec="seconds")
            self._date, self._zone, self._second = text[:19], text[19:], second
        return f"{self._date}.{int(record.msecs):03d}{self._zone}"

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        doc: dict[str, object] = {"ts": self.formatTime(record), "level": record.levelname,
                                  "logger": record.name, "msg": message}
        for key, value in message_pairs(message).items():
            if key not in FIXED_FIELDS:
                doc[key] = value
        # The exception and stack as the redacting filter left them (secrets masked).
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            doc["exc"] = record.exc_text
        if record.stack_info:
            doc["stack"] = record.stack_info
        return json.dumps(doc, ensure_ascii=False)
