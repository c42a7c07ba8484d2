"""The handler contract: outcomes, the context (logger, heartbeat, saved state), loading."""

from __future__ import annotations

import logging

import pytest

from taskqueue import (
    ConfigError,
    Done,
    Fail,
    LeaseLost,
    Park,
    Release,
    TaskContext,
    TaskQueue,
    load_handler,
)
from tests.taskqueue import handlers_for_tests as h


def test_outcomes_default_to_the_common_case() -> None:
    assert Done().result is None
    assert Release() == Release(state=None, delay=0)
    assert Fail("no").retryable is True
    park = Park("Send it?")
    assert park.request is None and park.attachments == () and park.expires_in is None


async def test_context_saves_state_under_the_claim(queue: TaskQueue) -> None:
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1")
    assert task is not None
    ctx = TaskContext(task, queue, "w1")
    await ctx.save_state({"cv": "drafted"})
    assert ctx.state == {"cv": "drafted"}
    assert (await queue.task_get(task.id)).state == {"cv": "drafted"}
    await ctx.heartbeat()
    await queue.task_cancel(task.id)
    with pytest.raises(LeaseLost):
        await ctx.save_state({"cv": "sent"})
    with pytest.raises(LeaseLost):
        await ctx.heartbeat()


async def test_context_logger_names_the_task(queue: TaskQueue,
                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="signoff")
    await queue.task_enqueue("demo", {})
    task = await queue.task_claim("demo", "w1")
    assert task is not None
    TaskContext(task, queue, "w1").log.info("drafting cv")
    [record] = [r for r in caplog.records if "drafting" in r.getMessage()]
    assert record.getMessage() == f"task={task.id} capability=demo drafting cv"
    assert record.__dict__["task_id"] == task.id


def test_load_handler_finds_module_function() -> None:
    assert load_handler("tests.taskqueue.handlers_for_tests:quick") is h.quick


@pytest.mark.parametrize(("spec", "message"), [
    ("no_colon", "must look like 'package.module:function'"),
    ("nosuch.module:f", "cannot import nosuch.module"),
    ("tests.taskqueue.handlers_for_tests:missing", "has no missing"),
    ("tests.taskqueue.handlers_for_tests:NOT_CALLABLE", "is not callable"),
])
def test_load_handler_errors_name_the_spec(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        load_handler(spec)
    assert spec in str(err.value)
