"""Requests asked from outside a worker (TaskQueue.request_*): born parked, found again by
their key, decided by anyone's channel, finished at the decision, and marked done once."""

from __future__ import annotations

import asyncio

import pytest

from taskqueue import (
    BadInput,
    Conflict,
    Decision,
    NewAttachment,
    Status,
    TaskNotFound,
    TaskQueue,
)

from ..factories import PNG, backdate, parked, sql, value


async def test_an_ask_parks_a_task_that_the_cli_decides(queue: TaskQueue) -> None:
    asked, created = await queue.request_park(
        "deploys", "Deploy web 1.2 to production?", asked_by="agent:ci",
        request={"service": "web", "version": "1.2"},
        attachments=[NewAttachment("diff.txt", b"+ one line\n")])
    assert created and asked.status == "needs_approval" and asked.approval.decision is None
    task = await queue.task_get(asked.id)
    assert task.status is Status.NEEDS_APPROVAL and task.worker is None
    assert task.approval is not None and task.approval.request == {"service": "web",
                                                                   "version": "1.2"}
    assert [a.filename for a in task.approval.attachments] == ["diff.txt"]
    assert [a.task_id for a in await queue.approval_list_open()] == [asked.id]
    await queue.approval_decide_for_task(asked.id, "approved", "Ada")
    done = await queue.request_get(asked.id)
    assert done.to_json() | {"expires_at": None} == {
        "id": asked.id, "status": "approved", "decision": "approved", "decided_by": "Ada",
        "note": None, "approvals": 1, "required": 1, "capability": "deploys",
        "question": "Deploy web 1.2 to production?", "key": None, "asked_by": "agent:ci",
        "expires_at": None, "done": False, "done_by": None, "result": None}
    # No worker resumes an asked request: the decision finished it.
    assert (await queue.task_get(asked.id)).status is Status.SUCCEEDED
    assert await queue.task_claim("deploys", "w1") is None


@pytest.mark.parametrize(("decision", "note", "status"), [
    (Decision.REVISED, "smaller batch", Status.SKIPPED),
    (Decision.SKIPPED, None, Status.SKIPPED)])
async def test_revise_and_skip_end_an_asked_request(queue: TaskQueue, decision: Decision,
                                                    note: str | None, status: Status) -> None:
    asked, _ = await queue.request_park("deploys", "Deploy?", asked_by="agent:ci")
    await queue.approval_decide_for_task(asked.id, decision, "ada", note)
    found = await queue.request_get(asked.id)
    assert (found.status, found.approval.note) == (decision.value, note)
    assert (await queue.task_get(asked.id)).status is status


async def test_a_worker_task_still_waits_for_its_worker_after_a_decision(
        queue: TaskQueue) -> None:
    task, _ = await parked(queue, "mail")
    await queue.approval_decide_for_task(task.id, "approved", "ada")
    assert (await queue.task_get(task.id)).status is Status.APPROVED


async def test_the_same_key_finds_the_same_request_whatever_its_status(
        queue: TaskQueue) -> None:
    first, created = await queue.request_park("deploys", "Deploy?", asked_by="ci", key="run-7")
    again, created_again = await queue.request_park("deploys", "Deploy??", asked_by="ci",
                                                    key="run-7")
    assert created and not created_again and again.id == first.id
    await queue.approval_decide_for_task(first.id, "skipped", "ada")
    after, created_after = await queue.request_park("deploys", "Deploy?", asked_by="ci",
                                                    key="run-7")
    assert not created_after and after.id == first.id and after.status == "skipped"
    other, created_other = await queue.request_park("builds", "Deploy?", asked_by="ci",
                                                    key="run-7")
    assert created_other and other.id != first.id
    assert await value(queue, "SELECT count(*) FROM tasks") == 2


async def test_concurrent_asks_with_one_key_make_one_request(queue: TaskQueue) -> None:
    results = await asyncio.gather(*[
        queue.request_park("deploys", "Deploy?", asked_by="ci", key="same") for _ in range(8)])
    assert len({r.id for r, _ in results}) == 1
    assert sum(created for _, created in results) == 1


async def test_the_capability_floor_holds(queue: TaskQueue) -> None:
    await queue.capability_set("deploys", required_approvals=2)
    low, _ = await queue.request_park("deploys", "Deploy?", asked_by="ci",
                                      required_approvals=1)
    high, _ = await queue.request_park("deploys", "Deploy?", asked_by="ci",
                                       required_approvals=3)
    assert (low.approval.required, high.approval.required) == (2, 3)
    fresh, _ = await queue.request_park("new_cap", "Deploy?", asked_by="ci")
    assert fresh.approval.required == 1
    assert (await queue.capability_get("new_cap")).required_approvals == 1
    assert await value(queue, "SELECT count(*) FROM capabilities WHERE capability = 'new_cap'")


async def test_wait_returns_at_the_decision(queue: TaskQueue) -> None:
    asked, _ = await queue.request_park("deploys", "Deploy?", asked_by="ci")
    waiting = asyncio.create_task(queue.request_wait(asked.id, 30))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    await queue.approval_decide_for_task(asked.id, "approved", "ada")
    found = await asyncio.wait_for(waiting, 5)
    assert found.status == "approved"
    assert (await queue.request_wait(asked.id, 0)).status == "approved"


async def test_wait_ends_open_at_its_timeout_and_expires_a_lapsed_request(
        queue: TaskQueue) -> None:
    asked, _ = await queue.request_park("deploys", "Deploy?", asked_by="ci")
    assert (await queue.request_wait(asked.id, 0.3)).status == "needs_approval"
    await backdate(queue, "approvals", "expires_at", "1 s", "task_id = %s", asked.id)
    assert (await queue.request_wait(asked.id, 5)).status == "expired"
    assert (await queue.task_get(asked.id)).status is Status.EXPIRED


async def test_done_records_the_result_once_on_an_approved_request(queue: TaskQueue) -> None:
    asked, _ = await queue.request_park("deploys", "Deploy?", asked_by="ci")
    with pytest.raises(Conflict, match="needs_approval"):
        await queue.request_done(asked.id, "ci", {"deployed": True})
    await queue.approval_decide_for_task(asked.id, "approved", "ada")
    done = await queue.request_done(asked.id, "ci", {"deployed": True})
    assert (done.done_by, done.result, done.to_json()["done"]) == ("ci", {"deployed": True},
                                                                   True)
    assert (await queue.task_get(asked.id)).result == {"deployed": True}
    kinds = [e.kind for e in (await queue.task_detail(asked.id)).events]
    assert kinds == ["asked", "decided", "request_done"]
    with pytest.raises(Conflict, match="already done"):
        await queue.request_done(asked.id, "ci", {"deployed": False})
    skipped, _ = await queue.request_park("deploys", "Deploy?", asked_by="ci")
    await queue.approval_decide_for_task(skipped.id, "skipped", "ada")
    with pytest.raises(Conflict, match="skipped"):
        await queue.request_done(skipped.id, "ci")


async def test_bad_asks_write_nothing(queue: TaskQueue) -> None:
    for kwargs, message in (
            ({"question": ""}, "question"),
            ({"key": ""}, "key"),
            ({"key": "x" * 201}, "key"),
            ({"expires_in": 0}, "expires-in"),
            ({"required_approvals": 0}, "required_approvals"),
            ({"attachments": [NewAttachment("../x.png", PNG)]}, "plain file name"),
            ({"request": {"a": float("nan")}}, "request")):
        args = {"question": "Deploy?"} | kwargs
        with pytest.raises(BadInput, match=message):
            await queue.request_park("deploys", args.pop("question"), asked_by="ci", **args)
    assert await value(queue, "SELECT count(*) FROM tasks") == 0
    assert await sql(queue, "SELECT * FROM capabilities") == []


async def test_a_worker_task_is_not_a_request(queue: TaskQueue) -> None:
    task, _ = await parked(queue, "mail")
    with pytest.raises(TaskNotFound):
        await queue.request_get(task.id)
    with pytest.raises(TaskNotFound):
        await queue.request_get(999_999)


async def test_max_parked_bounds_the_open_asks(queue: TaskQueue) -> None:
    await queue.capability_set("deploys", max_parked=2)
    first, _ = await queue.request_park("deploys", "One?", asked_by="ci", key="one")
    await queue.request_park("deploys", "Two?", asked_by="ci")
    with pytest.raises(Conflict, match="max_parked 2"):
        await queue.request_park("deploys", "Three?", asked_by="ci")
    again, created = await queue.request_park("deploys", "One?", asked_by="ci", key="one")
    assert not created and again.id == first.id  # a known key is no new question
    await queue.approval_decide_for_task(first.id, "approved", "ada")
    await queue.request_park("deploys", "Three?", asked_by="ci")
    assert await value(queue, "SELECT count(*) FROM tasks") == 3


async def test_concurrent_asks_never_pass_max_parked(queue: TaskQueue) -> None:
    await queue.capability_set("deploys", max_parked=3)
    results = await asyncio.gather(*[
        queue.request_park("deploys", "Go?", asked_by="ci") for _ in range(8)],
        return_exceptions=True)
    assert sum(not isinstance(r, BaseException) for r in results) == 3
    assert all(isinstance(r, Conflict) for r in results if isinstance(r, BaseException))
    assert await value(queue, "SELECT count(*) FROM tasks") == 3
