"""A long-running process's set-up (runtime/logsetup.py, runtime/gcfreeze.py): the log format
of `signoff` and `python -m bot`, and the start-up objects frozen out of the collector's full
passes."""

from __future__ import annotations

import logging
import re
import signal
from pathlib import Path

from taskqueue import TaskQueue
from taskqueue.runtime.logsetup import LOG_FORMAT, LogFormatter, configure_logging

from ..worker_helpers import spawn_worker, wait_status

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO signoff\.worker task transition "
                  r"task=(\d+) capability=logs from=(\w+) to=(\w+) worker=w-logs$")


def _record(created: float) -> logging.LogRecord:
    record = logging.LogRecord("signoff.worker", logging.INFO, __file__, 1, "task=%s", (7,),
                               None)
    record.created, record.msecs = created, (created - int(created)) * 1000
    return record


def test_the_formatter_writes_what_the_stock_one_writes() -> None:
    ours, stock = LogFormatter(), logging.Formatter(LOG_FORMAT)
    # Within one second, across seconds and back to an earlier one.
    for created in (1_700_000_000.0, 1_700_000_000.999, 1_700_000_001.004, 1_700_000_061.5,
                    1_600_000_000.25, 1_600_000_000.75):
        assert ours.format(_record(created)) == stock.format(_record(created))
    assert ours.formatTime(_record(1_700_000_000.5), "%H") == \
        stock.formatTime(_record(1_700_000_000.5), "%H")


async def test_a_worker_logs_each_transition_in_the_format_and_freezes_its_start_up(
        queue: TaskQueue, dsn: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    enq = await queue.task_enqueue("logs", {})
    proc = spawn_worker(dsn, "logs", "frozen_objects", "--name", "w-logs", log=log)
    try:
        task = await wait_status(queue, enq.id, "succeeded", timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    # Imports, config and the handler's module were frozen before the first claim.
    assert task.result is not None and task.result["frozen"] > 10_000
    lines = [m.groups() for m in map(LINE.match, log.read_text().splitlines()) if m]
    assert lines == [(str(enq.id), "pending", "running"), (str(enq.id), "running", "succeeded")]


def test_someone_elses_logging_set_up_is_left_alone() -> None:
    # A root logger with handlers already (an embedding program's, pytest's): no handler
    # is added and records keep the thread, process and source position it may print.
    root = logging.getLogger()
    assert root.handlers
    before = (list(root.handlers), root.level, logging.logProcesses, logging.logThreads)
    configure_logging(logging.DEBUG)
    assert (list(root.handlers), root.level, logging.logProcesses, logging.logThreads) == before
    record = logging.getLogger("x").makeRecord("x", logging.INFO, "f.py", 3, "m", (), None)
    assert record.process is not None
