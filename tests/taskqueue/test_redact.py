"""The secret registry and the log filter: registered values never reach a formatted line."""

from __future__ import annotations

import io
import logging

import pytest

from taskqueue import (
    MASK,
    RedactingFilter,
    redact,
    secret_register,
    secret_register_dsn,
    secret_register_environment,
)
from taskqueue.runtime.logsetup import LogFormatter

TOKEN = "5550001:AAredact-test-token"


def format_through(handler_filter: logging.Filter | None, logger: str, *args: object,
                   exc: BaseException | None = None) -> str:
    """What a StreamHandler (with `handler_filter`, if any) writes for one record."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(LogFormatter())
    if handler_filter is not None:
        handler.addFilter(handler_filter)
    record = logging.getLogger(logger).makeRecord(
        logger, logging.INFO, __file__, 1, args[0], args[1:], (type(exc), exc, None)
        if exc else None)
    handler.handle(record)
    return stream.getvalue()


def test_httpx_request_line_carries_the_token_unless_filtered() -> None:
    secret_register(TOKEN)
    line = ('HTTP Request: %s %s "%s"', "POST",
            f"https://api.telegram.org/bot{TOKEN}/getUpdates", "HTTP/1.1 200 OK")
    assert TOKEN in format_through(None, "httpx", *line)  # what main printed
    masked = format_through(RedactingFilter(), "httpx", *line)
    assert TOKEN not in masked and f"/bot{MASK}/getUpdates" in masked


def test_the_filter_masks_the_exception_text_and_the_traceback() -> None:
    secret_register(TOKEN)
    try:
        raise RuntimeError(f"refused: {TOKEN}")
    except RuntimeError as exc:
        text = format_through(RedactingFilter(), "anything", "failed %s", TOKEN, exc=exc)
    assert TOKEN not in text and text.count(MASK) == 2 and "RuntimeError" in text


@pytest.mark.parametrize("dsn, password", [
    ("postgresql://u:pl%40in-Pass@db:5432/x", "pl@in-Pass"),
    ("postgresql://u:raw-Pass-9@db:notaport/x", "raw-Pass-9"),
    ("host=db user=u password=kv-Pass-7 dbname=x", "kv-Pass-7"),
    ("host=db user=u password='quoted Pass 3' dbname=x", "quoted Pass 3"),
])
def test_a_database_url_password_is_registered_in_every_spelling(dsn: str,
                                                                 password: str) -> None:
    secret_register_dsn(dsn)
    assert password not in redact(f"connecting with {dsn} ({password})")


def test_secret_named_variables_are_registered_and_short_values_are_not() -> None:
    secret_register_environment({"SOME_API_KEY": "k-12345-abc", "A_TOKEN": "abc",
                                 "HOME_DIR": "/home/someone-else"})
    assert redact("k-12345-abc abc /home/someone-else") == f"{MASK} abc /home/someone-else"


def test_a_signing_keys_identifiers_are_registered_before_their_reader_loads() -> None:
    # The builds workload registers these when its settings load; a process that never
    # loads it (the service without a build capability) still masks them.
    secret_register_environment({"SIGNOFF_ASC_KEY_ID": "ASCKEY-77aa",
                                 "SIGNOFF_ASC_ISSUER_ID": "issuer-0f3c-91",
                                 "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE42",
                                 "SIGNOFF_JOB_ID": "job-12345", "KEY_IDLE": "idle-9999"})
    assert redact("ASCKEY-77aa issuer-0f3c-91 AKIAEXAMPLE42 job-12345 idle-9999") == \
        f"{MASK} {MASK} {MASK} job-12345 idle-9999"


def test_a_secret_inside_a_longer_one_is_masked_whole() -> None:
    secret_register("inner-secret", "outer-inner-secret-value")
    assert redact("x outer-inner-secret-value y inner-secret") == f"x {MASK} y {MASK}"


def test_a_bad_format_string_is_logged_masked_instead_of_raising() -> None:
    secret_register(TOKEN)
    text = format_through(RedactingFilter(), "anything", f"{TOKEN} %d %d", "one")
    assert "unformattable" in text and TOKEN not in text
