"""The API's bounds on what it stores: JSON size, depth, numbers and types; text lengths;
per-queue limits and the config file's [limits]."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue import (
    BadInput,
    ConfigError,
    Done,
    NewAttachment,
    NewTask,
    Park,
    Status,
    Task,
    TaskContext,
    TaskQueue,
)
from taskqueue.config.settings import apply_capabilities, load_config
from taskqueue.runtime.handler import Handler, Outcome
from taskqueue.store.checks import DEFAULT_LIMITS, MAX_ERROR_CHARS, Limits, check_json

from ..factories import CAP, claimed, sql, value
from ..worker_helpers import run_of, running_pool, wait_status


def deep(depth: int) -> dict[str, object]:
    node: dict[str, object] = {}
    for _ in range(depth - 1):
        node = {"a": node}
    return node


@pytest.mark.parametrize(("bad", "match"), [
    (deep(10_000), "nested deeper than 64 levels"),
    ({"a": [[[[]]]] * 2 + [deep(64)]}, "nested deeper than 64"),
    ({"n": 10**5000}, "more than 1000 digits"),
    ({"n": float("nan")}, "NaN or Infinity"),
    ({"n": float("-inf")}, "NaN or Infinity"),
    ({"when": object()}, "holds a object, which is not a JSON value"),
    ({"s": "\ud800"}, "lone surrogate"),
    ({"s": "a\x00b"}, "u0000"),
    ({"blob": "x" * (2**20)}, r"at least 1048580 bytes of JSON, over the limit of 1048576"),
    # A flat object is checked without the walk's stack: its keys as strictly as its values,
    # and a value of a subclass, or a nested one after flat ones, still takes the walk.
    ({"a\x00b": 1}, "u0000"),
    ({"\ud800": 1}, "lone surrogate"),
    ({"ok": 1, "n": [float("nan")]}, "NaN or Infinity"),
    ({"ok": 1, "s": type("Text", (str,), {})("a\x00b")}, "u0000"),
    ({"ok": 1, "a": deep(64)}, "nested deeper than 64"),
])
async def test_enqueue_refuses_json_past_the_limits_and_writes_nothing(
        queue: TaskQueue, bad: dict[str, object], match: str) -> None:
    with pytest.raises(BadInput, match=match):
        await queue.task_enqueue(CAP, bad)
    with pytest.raises(BadInput, match=r"the payload of item 2"):
        await queue.task_enqueue_many(CAP, [NewTask({"ok": 1}), NewTask(bad)])
    assert await value(queue, "SELECT count(*) FROM tasks") == 0


async def test_json_at_the_limits_is_stored(queue: TaskQueue) -> None:
    check_json(deep(64), "x")
    # {"blob":"…"} is 11 bytes around the string: exactly the limit fits.
    fits = {"blob": "é" * ((2**20 - 11) // 2) + "x"}
    assert len(str(fits["blob"]).encode()) + 11 == 2**20
    task_id = (await queue.task_enqueue(CAP, fits)).id
    assert (await queue.task_get(task_id)).payload == fits
    with pytest.raises(BadInput, match="1048577 bytes of JSON"):
        await queue.task_enqueue(CAP, {"blob": str(fits["blob"]) + "x"})


async def test_each_queue_has_its_own_limits_for_state_result_and_request(
        queue: TaskQueue) -> None:
    small = TaskQueue(queue.pool, max_json_bytes=50, max_json_depth=2)
    big = {"text": "x" * 60}
    await queue.task_enqueue("other", big)  # the default queue takes it
    with pytest.raises(BadInput, match=r"the payload is .* over the limit of 50"):
        await small.task_enqueue("other", big)
    task = await claimed(small, payload={"ok": 1})
    for call in (
            lambda: small.task_save_state(task.id, "w1", big, claim=task.claim),
            lambda: small.task_release(task.id, "w1", state=big, claim=task.claim),
            lambda: small.task_complete(task.id, "w1", result=big, claim=task.claim),
            lambda: small.task_park(task.id, "w1", "Go?", request=big, claim=task.claim),
            lambda: small.task_park(task.id, "w1", "Go?", request={"a": {"b": {}}},
                                    claim=task.claim)):
        with pytest.raises(BadInput, match=r"the (state|result|request) is"):
            await call()
    assert (await queue.task_get(task.id)).status is Status.RUNNING
    assert await value(queue, "SELECT count(*) FROM approvals") == 0
    await small.task_complete(task.id, "w1", result={"ok": 2}, claim=task.claim)


@pytest.mark.parametrize("kwargs", [{"max_json_bytes": 0}, {"max_json_depth": -1},
                                    {"max_attachment_bytes": True}])
def test_limits_must_be_positive_whole_numbers(kwargs: dict[str, int]) -> None:
    with pytest.raises(BadInput, match="must be a whole number of at least 1"):
        Limits(**kwargs)


async def test_text_inputs_are_bounded(queue: TaskQueue) -> None:
    with pytest.raises(BadInput, match="dedupe key is 501 characters"):
        await queue.task_enqueue("other", dedupe_key="k" * 501)
    await queue.task_enqueue("other", dedupe_key="k" * 500)
    with pytest.raises(BadInput, match="worker name is 201 characters"):
        await queue.task_claim(CAP, "w" * 201)
    with pytest.raises(BadInput, match="worker name holds a control character"):
        await queue.task_claim(CAP, "w\n1")
    task = await claimed(queue)
    with pytest.raises(BadInput, match="question is 10001 characters"):
        await queue.task_park(task.id, "w1", "q" * 10_001, claim=task.claim)
    with pytest.raises(BadInput, match="error is 65537 characters"):
        await queue.task_fail(task.id, "w1", "e" * 65_537, claim=task.claim)
    with pytest.raises(BadInput, match="actor is 201 characters"):
        await queue.event_insert(task.id, "note", actor="a" * 201)
    await queue.task_park(task.id, "w1", "q" * 10_000, claim=task.claim)
    with pytest.raises(BadInput, match="note is 10001 characters"):
        await queue.approval_decide_for_task(task.id, "revised", "alice", "n" * 10_001)
    with pytest.raises(BadInput, match="decider's name is 201 characters"):
        await queue.approval_decide_for_task(task.id, "approved", "a" * 201)
    assert (await queue.task_get(task.id)).status is Status.NEEDS_APPROVAL
    await queue.approval_decide_for_task(task.id, "revised", "alice", "n" * 10_000)


async def test_the_config_files_limits_become_the_queues(queue: TaskQueue,
                                                        tmp_path: Path) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text("[limits]\nmax_json_bytes = 30\nmax_json_depth = 5\n"
                      "max_attachment_bytes = 7\n", "utf-8")
    loaded = load_config(config)
    assert loaded.limits == Limits(30, 5, 7)
    assert queue.limits == DEFAULT_LIMITS
    await apply_capabilities(queue, loaded)
    assert queue.limits == Limits(30, 5, 7) and queue.max_attachment_bytes == 7
    with pytest.raises(BadInput, match="over the limit of 30"):
        await queue.task_enqueue(CAP, {"text": "x" * 30})
    assert await sql(queue, "SELECT count(*) AS n FROM tasks") == [{"n": 0}]
    config.write_text("[limits]\nmax_json_depth = \"deep\"\n", "utf-8")
    with pytest.raises(ConfigError, match=r"line 2: limits.max_json_depth: must be a whole"):
        load_config(config)


async def _huge_error(task: Task, ctx: TaskContext) -> Outcome:
    raise RuntimeError("e" * 100_000)


async def _huge_result(task: Task, ctx: TaskContext) -> Outcome:
    return Done({"blob": "x" * (2**20)})


async def _bad_name(task: Task, ctx: TaskContext) -> Outcome:
    return Park("Go?", attachments=(NewAttachment("a\nb.txt", b"text"),))


@pytest.mark.parametrize(("handler", "error"), [
    (_huge_error, "RuntimeError: eeee"),
    (_huge_result, "invalid outcome: the result is at least 1048580 bytes of JSON"),
    (_bad_name, "invalid outcome: attachment name 'a\\nb.txt' is not a plain file name"),
])
async def test_a_handler_outcome_past_the_limits_fails_the_task_instead(
        queue: TaskQueue, handler: Handler, error: str) -> None:
    enq = await queue.task_enqueue(CAP, {}, max_attempts=1)
    async with running_pool(queue, run_of(handler)):
        task = await wait_status(queue, enq.id, "failed")
    assert task.last_error is not None and task.last_error.startswith(error)
    assert len(task.last_error) <= MAX_ERROR_CHARS
    assert await value(queue, "SELECT count(*) FROM approvals") == 0
