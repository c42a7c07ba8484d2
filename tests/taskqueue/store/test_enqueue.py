"""Enqueue: new pending tasks, batches that are all or nothing, dedupe keys, bad input."""

from __future__ import annotations

from typing import Any

import pytest

from taskqueue import BadInput, NewTask, Status, TaskQueue

from ..factories import CAP, claimed, enqueue, in_threads, sql, sync_rows, task_in, value


async def test_enqueue_adds_a_pending_task_with_defaults(queue: TaskQueue) -> None:
    enq = await queue.task_enqueue(CAP, {"url": "https://example.org"}, priority=4)
    assert enq.created
    task = await queue.task_get(enq.id)
    assert task.status is Status.PENDING and task.capability == CAP
    assert task.payload == {"url": "https://example.org"} and task.state == {}
    assert task.priority == 4 and task.attempts == 0 and task.max_attempts == 3
    assert task.worker is None and task.claim is None and task.lease_expires_at is None
    assert task.first_claimed_at is None and task.result is None and task.approval is None
    assert await value(queue, "SELECT run_after <= now() FROM tasks WHERE id = %s", enq.id)


async def test_enqueue_without_a_payload_stores_an_empty_object(queue: TaskQueue) -> None:
    task = await queue.task_get((await queue.task_enqueue(CAP)).id)
    assert task.payload == {}


async def test_enqueue_with_a_delay_sets_run_after_in_the_future(queue: TaskQueue) -> None:
    task_id = await enqueue(queue, delay=120)
    ahead = await value(queue, "SELECT extract(epoch FROM run_after - created_at) FROM tasks "
                               "WHERE id = %s", task_id)
    assert ahead == 120


async def test_enqueue_takes_max_attempts_from_the_task_then_the_capability(
        queue: TaskQueue) -> None:
    await queue.capability_set(CAP, max_attempts=7)
    assert (await queue.task_get(await enqueue(queue))).max_attempts == 7
    assert (await queue.task_get(await enqueue(queue, max_attempts=2))).max_attempts == 2
    assert (await queue.task_get(await enqueue(queue, "other"))).max_attempts == 3


async def test_enqueue_writes_an_enqueued_event(queue: TaskQueue) -> None:
    task_id = await enqueue(queue, actor="scheduler", dedupe_key="k")
    [event] = (await queue.task_detail(task_id)).events
    assert (event.kind, event.actor) == ("enqueued", "scheduler")
    assert event.detail == {"to": "pending", "dedupe_key": "k"}


async def test_enqueue_many_adds_every_task_in_order(queue: TaskQueue) -> None:
    items = [NewTask({"n": n}, priority=n) for n in range(5)]
    out = await queue.task_enqueue_many(CAP, items)
    assert [e.created for e in out] == [True] * 5
    tasks = [await queue.task_get(e.id) for e in out]
    assert [t.payload["n"] for t in tasks] == [0, 1, 2, 3, 4]
    assert [t.priority for t in tasks] == [0, 1, 2, 3, 4]


async def test_enqueue_many_with_a_bad_item_inserts_nothing(queue: TaskQueue) -> None:
    items = [NewTask({"n": 1}), NewTask({"n": 2}, delay=-1)]
    with pytest.raises(BadInput):
        await queue.task_enqueue_many(CAP, items)
    assert await value(queue, "SELECT count(*) FROM tasks") == 0


async def test_enqueue_many_with_a_priority_past_the_column_inserts_nothing(
        queue: TaskQueue) -> None:
    items = [NewTask({"n": 1}), NewTask({"n": 2}, priority=2**40)]
    with pytest.raises(BadInput, match="priority"):
        await queue.task_enqueue_many(CAP, items)
    assert await value(queue, "SELECT count(*) FROM tasks") == 0


async def test_dedupe_key_held_by_an_unfinished_or_succeeded_task_returns_it(
        queue: TaskQueue) -> None:
    for status in [Status.PENDING, Status.RUNNING, Status.NEEDS_APPROVAL, Status.APPROVED,
                   Status.SUCCEEDED]:
        task_id = await task_in(queue, status, capability=status)
        await sql(queue, "UPDATE tasks SET dedupe_key = 'k' WHERE id = %s", task_id)
        tasks, events = await _counts(queue)
        again = await queue.task_enqueue(status, {"n": 2}, dedupe_key="k")
        assert (again.id, again.created) == (task_id, False), status
        assert await _counts(queue) == (tasks, events), status


async def test_dedupe_key_of_a_failed_or_ended_task_is_free_again(queue: TaskQueue) -> None:
    for status in [Status.FAILED, Status.CANCELLED, Status.SKIPPED, Status.EXPIRED]:
        task_id = await task_in(queue, status, capability=status)
        await sql(queue, "UPDATE tasks SET dedupe_key = 'k' WHERE id = %s", task_id)
        again = await queue.task_enqueue(status, {"n": 2}, dedupe_key="k")
        assert again.created and again.id != task_id, status


async def _counts(queue: TaskQueue) -> tuple[int, int]:
    return (await value(queue, "SELECT count(*) FROM tasks"),
            await value(queue, "SELECT count(*) FROM task_events"))


async def test_dedupe_key_is_per_capability(queue: TaskQueue) -> None:
    first = await queue.task_enqueue(CAP, dedupe_key="k")
    other = await queue.task_enqueue("other", dedupe_key="k")
    assert other.created and other.id != first.id


async def test_dedupe_key_repeated_in_one_batch_inserts_one_task(queue: TaskQueue) -> None:
    out = await queue.task_enqueue_many(CAP, [NewTask({"n": 1}, dedupe_key="k"),
                                              NewTask({"n": 2}, dedupe_key="k")])
    assert out[0].created and not out[1].created and out[0].id == out[1].id
    assert await value(queue, "SELECT count(*) FROM tasks") == 1


def test_concurrent_enqueues_with_one_dedupe_key_make_one_task(dsn: str) -> None:
    async def work(q: TaskQueue, i: int) -> tuple[int, bool]:
        enq = await q.task_enqueue(CAP, {"i": i}, dedupe_key="same")
        return enq.id, enq.created

    results = in_threads(12, dsn, work)
    assert len({task_id for task_id, _ in results}) == 1
    assert [created for _, created in results].count(True) == 1
    assert sync_rows(dsn, "SELECT count(*) AS n FROM tasks") == [{"n": 1}]


def test_concurrent_batches_sharing_keys_in_any_order_make_each_task_once(dsn: str) -> None:
    keys = [f"k{i}" for i in range(100)]

    async def work(q: TaskQueue, i: int) -> dict[str, int]:
        order = keys if i % 2 else keys[::-1]
        out = await q.task_enqueue_many(CAP, [NewTask({"k": k}, dedupe_key=k) for k in order])
        return {k: e.id for k, e in zip(order, out, strict=True)}

    results = in_threads(4, dsn, work)
    assert all(r == results[0] for r in results)
    assert sync_rows(dsn, "SELECT count(*) AS n FROM tasks") == [{"n": 100}]


@pytest.mark.parametrize("capability", ["", "   ", "x" * 201])
async def test_enqueue_refuses_a_bad_capability(offline: TaskQueue, capability: str) -> None:
    with pytest.raises(BadInput, match="capability"):
        await offline.task_enqueue(capability)


@pytest.mark.parametrize("payload", [[1, 2], [], "text", "", 3, 0, False])
async def test_enqueue_refuses_a_payload_that_is_not_an_object(offline: TaskQueue,
                                                               payload: Any) -> None:
    with pytest.raises(BadInput, match="object"):
        await offline.task_enqueue(CAP, payload)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"delay": -1}, "delay"),
    ({"max_attempts": 0}, "max-attempts"),
    ({"dedupe_key": ""}, "dedupe"),
    ({"priority": -(2**31) - 1}, "priority"),
])
async def test_enqueue_refuses_bad_options(offline: TaskQueue, kwargs: dict[str, Any],
                                           match: str) -> None:
    with pytest.raises(BadInput, match=match):
        await offline.task_enqueue(CAP, {}, **kwargs)


async def test_claimed_tasks_keep_their_payload(queue: TaskQueue) -> None:
    task = await claimed(queue, payload={"deep": {"list": [1, 2]}})
    assert task.payload == {"deep": {"list": [1, 2]}}


async def test_enqueue_many_of_nothing_adds_nothing(queue: TaskQueue) -> None:
    assert await queue.task_enqueue_many("c", []) == []
    assert await queue.task_list() == []


async def test_enqueue_many_mixes_new_tasks_and_dedupe_hits_in_order(queue: TaskQueue) -> None:
    held = await queue.task_enqueue("c", {"n": 0}, dedupe_key="k0")
    done = await queue.task_enqueue_many("c", [
        NewTask({"n": 1}), NewTask({"n": 2}, dedupe_key="k0"), NewTask({"n": 3}, dedupe_key="k3")])
    assert [e.created for e in done] == [True, False, True]
    assert done[1].id == held.id
    assert [t.payload["n"] for t in await queue.task_list()] == [0, 1, 3]


async def test_a_batch_without_dedupe_keys_writes_the_same_rows_as_a_keyed_one(
        queue: TaskQueue) -> None:
    # Two statements enqueue batches (with and without keys): their tasks and events match.
    await queue.capability_set("plain", max_attempts=7)
    payloads: list[Any] = [{"name": "Zoë \\ \" ' {}", "deep": [[{"x": None}]]}, {},
                           {"n": 3.5}, {"big": 10**30}]
    plain = await queue.task_enqueue_many(
        "plain", [NewTask(p, priority=i, delay=60 * i) for i, p in enumerate(payloads)],
        actor="tester")
    keyed = await queue.task_enqueue_many(
        "plain", [NewTask(p, priority=i, delay=60 * i, dedupe_key=f"k{i}")
                  for i, p in enumerate(payloads)], actor="tester")
    assert [e.created for e in plain + keyed] == [True] * 8
    assert [e.id for e in plain] == sorted(e.id for e in plain)
    for batch in (plain, keyed):
        tasks = [await queue.task_get(e.id) for e in batch]
        assert [t.payload for t in tasks] == payloads
        assert [t.priority for t in tasks] == [0, 1, 2, 3]
        assert {t.max_attempts for t in tasks} == {7}
    rows = await sql(queue, "SELECT task_id, kind, actor, detail - 'dedupe_key' AS detail "
                            "FROM task_history ORDER BY id")
    assert [r["task_id"] for r in rows] == [e.id for e in plain + keyed]
    assert {(r["kind"], r["actor"], str(r["detail"])) for r in rows} == {
        ("enqueued", "tester", "{'to': 'pending'}")}
    assert await value(queue, "SELECT count(*) FROM tasks WHERE run_after > now() + "
                              "interval '150 seconds'") == 2
