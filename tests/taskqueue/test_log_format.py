"""--log-format json / SIGNOFF_LOG_FORMAT and --log-level / SIGNOFF_LOG_LEVEL: one JSON
object a line with the text format's fields, and the level chosen."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from taskqueue import MASK, RedactingFilter, TaskQueue, secret_register
from taskqueue.runtime.process import JsonFormatter, LogFormatter, log_options

from .worker_helpers import spawn_worker, wait_status


def _record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("signoff.worker", logging.INFO, __file__, 1, msg, args, None)


def test_a_json_line_has_the_text_lines_fields_and_its_pairs() -> None:
    record = _record("task transition task=%s capability=%s from=%s", 7, "mail", "pending")
    doc = json.loads(JsonFormatter().format(record))
    text = LogFormatter().format(record)
    assert text == f"{doc['time']} INFO signoff.worker {doc['message']}"
    assert (doc["level"], doc["logger"]) == ("INFO", "signoff.worker")
    assert (doc["task"], doc["capability"], doc["from"]) == ("7", "mail", "pending")


def test_a_pair_cannot_overwrite_a_fixed_field_and_quotes_stay_json() -> None:
    doc = json.loads(JsonFormatter().format(_record('level=oops said "hi"\nnext')))
    assert doc["level"] == "INFO" and doc["message"] == 'level=oops said "hi"\nnext'


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
    assert doc["url"] == f"/bot{MASK}/getMe" and MASK in doc["exception"]


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
