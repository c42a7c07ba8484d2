"""--log-format json / SIGNOFF_LOG_FORMAT and --log-level / SIGNOFF_LOG_LEVEL: one JSON
object a line with the text format's fields, and the level chosen."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from taskqueue import MASK, RedactingFilter, TaskQueue, secret_register
from taskqueue.runtime.logjson import JsonFormatter, message_pairs
from taskqueue.runtime.logsetup import LogFormatter, log_options

from ..worker_helpers import spawn_worker, wait_status


def _record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("signoff.worker", logging.INFO, __file__, 1, msg, args, None)


def _json(msg: str, *args: object) -> dict[str, object]:
    doc: dict[str, object] = json.loads(JsonFormatter().format(_record(msg, *args)))
    return doc


def test_a_json_line_has_the_text_lines_fields_and_its_pairs() -> None:
    record = _record("task transition task=%s capability=%s from=%s", 7, "mail", "pending")
    doc = json.loads(JsonFormatter().format(record))
    text = LogFormatter().format(record)
    assert text.endswith(f" INFO signoff.worker {doc['msg']}")
    assert (doc["level"], doc["logger"]) == ("INFO", "signoff.worker")
    assert (doc["task"], doc["capability"], doc["from"]) == ("7", "mail", "pending")


def test_the_json_time_is_iso_8601_with_the_utc_offset_and_the_text_lines_instant() -> None:
    record = _record("tick")
    stamp = str(_json("tick")["ts"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d", stamp), stamp
    record.created, record.msecs = 1796233201.123, 123.0
    stamp = str(json.loads(JsonFormatter().format(record))["ts"])
    moment = datetime.fromisoformat(stamp)
    assert moment.timestamp() == pytest.approx(1796233201.123, abs=0.001)
    text_time = LogFormatter().format(record).split(" INFO ")[0]  # local time, comma, ms
    assert stamp.startswith(text_time.replace(" ", "T").replace(",", "."))


def test_a_value_with_spaces_runs_to_the_next_key_and_msg_keeps_everything() -> None:
    msg = "outcome discarded task=4 reason=lease lost to another worker=w2 at=the end"
    doc = _json(msg)
    assert doc["msg"] == msg
    assert (doc["task"], doc["reason"], doc["worker"]) == ("4", "lease lost to another", "w2")
    assert doc["at"] == "the end"


def test_quoted_values_are_unquoted_whole() -> None:
    doc = _json('refused text="a b task=9 c" account=%r note="say \\"hi\\"" user=5',
                "bob o'neil")
    assert (doc["text"], doc["account"], doc["user"]) == ("a b task=9 c", "bob o'neil", "5")
    assert doc["note"] == 'say "hi"' and "task" not in doc
    unclosed = _json('refused text="a b user=5')
    assert (unclosed["text"], unclosed["user"]) == ('"a b', "5")


def test_trailing_punctuation_and_clause_breaks_end_a_value() -> None:
    assert message_pairs("lease lost task=42 worker=w1: lease lost") == {
        "task": "42", "worker": "w1"}
    assert message_pairs("down worker=w1; retrying in retry_in=2.0s.") == {
        "worker": "w1", "retry_in": "2.0s"}
    assert message_pairs("sent task=42, approval=7! done=yes?") == {
        "task": "42", "approval": "7", "done": "yes"}
    # Inside a value, punctuation stays: a URL, a time, a list, a lone dot.
    assert message_pairs("url=http://h:1/a?b=c at=12:30 caps=a,b,c dots=...") == {
        "url": "http://h:1/a?b=c", "at": "12:30", "caps": "a,b,c", "dots": "..."}


def test_values_end_at_the_line_end_and_the_first_of_a_repeated_key_wins() -> None:
    assert message_pairs("first task=1 two\nnext task=2 x=\ny=3") == {
        "task": "1 two", "x": "", "y": "3"}


def test_a_json_line_carries_the_exception_as_exc() -> None:
    try:
        raise ValueError("boom in the handler")
    except ValueError as exc:
        record = logging.LogRecord("signoff.worker", logging.ERROR, __file__, 1,
                                   "slice crashed task=%s worker=%s", (3, "w1"),
                                   (type(exc), exc, exc.__traceback__))
    doc = json.loads(JsonFormatter().format(record))
    assert (doc["task"], doc["worker"], doc["level"]) == ("3", "w1", "ERROR")
    assert str(doc["exc"]).startswith("Traceback (most recent call last):")
    assert str(doc["exc"]).endswith("ValueError: boom in the handler")


def test_options_win_over_the_environment_and_bad_values_are_refused() -> None:
    env = {"SIGNOFF_LOG_FORMAT": "json", "SIGNOFF_LOG_LEVEL": "error"}
    assert log_options(None, None, logging.INFO, env) == ("json", logging.ERROR)
    assert log_options("text", "debug", logging.INFO, env) == ("text", logging.DEBUG)
    assert log_options(None, None, logging.INFO, {}) == ("text", logging.INFO)
    with pytest.raises(ValueError, match="SIGNOFF_LOG_FORMAT"):
        log_options(None, None, logging.INFO, {"SIGNOFF_LOG_FORMAT": "xml"})


def test_a_bad_environment_value_is_a_one_line_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "taskqueue", "ls"], capture_output=True,
                          text=True, timeout=60, check=False,
                          env={"SIGNOFF_LOG_LEVEL": "loud", "PATH": "/usr/bin"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "SIGNOFF_LOG_LEVEL" in done.stderr


async def test_a_worker_logs_json_lines(queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    enq = await queue.task_enqueue("logs", {})
    proc = spawn_worker(dsn, "logs", "quick", "--name", "w-json", "--log-format", "json",
                        log=log)
    try:
        await wait_status(queue, enq.id, "succeeded", timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    docs = [json.loads(line) for line in log.read_text().splitlines()]  # every line is JSON
    moves = [(d["task"], d["from"], d["to"]) for d in docs if d.get("to")]
    assert moves == [(str(enq.id), "pending", "running"), (str(enq.id), "running", "succeeded")]


async def test_a_worker_at_warning_level_logs_no_transitions(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    enq = await queue.task_enqueue("logs", {})
    proc = spawn_worker(dsn, "logs", "quick", "--log-level", "warning", log=log)
    try:
        await wait_status(queue, enq.id, "succeeded", timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert "transition" not in log.read_text()


def test_json_lines_are_redacted_too() -> None:
    token = "5550001:AAjson-redact-token"
    secret_register(token)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactingFilter())
    try:
        raise RuntimeError(f"refused: {token}")
    except RuntimeError as exc:
        record = logging.getLogger("httpx").makeRecord(
            "httpx", logging.INFO, __file__, 1, "request url=%s", (f"/bot{token}/getMe",),
            (type(exc), exc, exc.__traceback__))
    handler.handle(record)
    doc = json.loads(stream.getvalue())
    assert token not in stream.getvalue()
    assert doc["url"] == f"/bot{MASK}/getMe" and MASK in str(doc["exc"])


def test_a_secret_inside_a_spaced_value_is_masked_in_every_field() -> None:
    token = "5550001:AAspaced-value-token"
    secret_register(token)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactingFilter())
    handler.handle(_record('refused reason=bad token %s for you note="the %s" task=%s',
                           token, token, 5))
    doc = json.loads(stream.getvalue())
    assert token not in stream.getvalue()
    assert doc["reason"] == f"bad token {MASK} for you" and doc["note"] == f"the {MASK}"
    assert doc["task"] == "5" and MASK in str(doc["msg"])


def test_a_service_logs_json_with_the_secret_masked(tmp_path: Path) -> None:
    token = "5550001:AAservice-json-token"
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": token, "SIGNOFF_LOG_FORMAT": "json",
           "DATABASE_URL": "postgresql://postgres@127.0.0.1:1/none"}
    done = subprocess.run([sys.executable, "-m", "bot", "--log-level", "debug"],
                          capture_output=True, text=True, timeout=60, check=False, env=env,
                          cwd=tmp_path)
    assert token not in done.stderr + done.stdout
    logged = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert logged and logged[0]["level"] == "DEBUG"  # --log-level debug took effect
    assert done.returncode == 1 and done.stderr.splitlines()[-1].startswith("signoff: ")
