"""The worker calls over HTTP, each fenced on the worker and its claim token: release,
fail, park with files, and every call refused (409 lease_lost) once the claim is gone."""

from __future__ import annotations

import base64

from taskqueue import Status
from tests.bot.api.conftest import Api
from tests.taskqueue.factories import PNG, enqueue


async def test_release_fail_and_park_with_files(api: Api) -> None:
    token = await api.token("w", None, ("work",))
    task_id = await enqueue(api.queue, "jobs")
    status, task, _ = await api.call("POST", "/api/v1/work/claim", token,
                                     json={"capability": "jobs", "worker": "w1"})
    assert status == 200 and task["id"] == task_id and task["claim"]
    fence = {"worker": "w1", "claim": task["claim"]}
    status, released, _ = await api.call("POST", f"/api/v1/tasks/{task_id}/release", token,
                                         json=fence | {"state": {"page": 2}})
    assert (status, released["status"], released["state"]) == (200, "pending", {"page": 2})
    status, _, _ = await api.call("POST", f"/api/v1/tasks/{task_id}/heartbeat", token,
                                  json=fence)
    assert status == 409
    _, task, _ = await api.call("POST", "/api/v1/work/claim", token,
                                json={"capability": "jobs", "worker": "w1"})
    fence = {"worker": "w1", "claim": task["claim"]}
    status, failed, _ = await api.call("POST", f"/api/v1/tasks/{task_id}/fail", token,
                                       json=fence | {"error": "boom", "retry": False})
    assert (status, failed["status"], failed["last_error"]) == (200, "failed", "boom")
    for call in ("heartbeat", "state", "release", "complete", "fail", "park"):
        status, body, _ = await api.call("POST", f"/api/v1/tasks/{task_id}/{call}", token,
                                         json=fence | {"state": {}, "error": "x",
                                                       "question": "Q?"})
        assert (status, body["error"]) == (409, "lease_lost"), (call, body)
    await api.queue.task_retry(task_id)
    _, task, _ = await api.call("POST", "/api/v1/work/claim", token,
                                json={"capability": "jobs", "worker": "w2"})
    status, approval, _ = await api.call("POST", f"/api/v1/tasks/{task_id}/park", token, json={
        "worker": "w2", "claim": task["claim"], "question": "Send?", "request": {"to": "x"},
        "files": [{"filename": "a.png", "content_base64": base64.b64encode(PNG).decode()}]})
    assert status == 200 and [a["filename"] for a in approval["attachments"]] == ["a.png"]
    assert (await api.queue.task_get(task_id)).status is Status.NEEDS_APPROVAL
    status, _, _ = await api.call("POST", "/api/v1/work/claim", token,
                                  json={"capability": "jobs", "worker": "w2"})
    assert status == 204
    status, body, _ = await api.call("POST", f"/api/v1/tasks/{task_id}/complete", token,
                                     json={"worker": "w2"})
    assert (status, body["error"]) == (400, "bad_input")


async def test_the_worker_defaults_to_the_tokens_actor(api: Api) -> None:
    agent = await api.token("node", None, ("work",))
    person = await api.token("ada-worker", "ada", ("work",))
    first, second = await enqueue(api.queue, "jobs"), await enqueue(api.queue, "jobs")
    _, task, _ = await api.call("POST", "/api/v1/work/claim", agent, json={"capability": "jobs"})
    assert (task["id"], task["worker"]) == (first, "agent:node")
    status, done, _ = await api.call("POST", f"/api/v1/tasks/{first}/complete", agent,
                                     json={"claim": task["claim"]})
    assert (status, done["status"]) == (200, "succeeded")
    _, task, _ = await api.call("POST", "/api/v1/work/claim", person, json={"capability": "jobs"})
    assert (task["id"], task["worker"]) == (second, "ada")
    status, _, _ = await api.call("POST", f"/api/v1/tasks/{second}/complete", agent,
                                  json={"claim": task["claim"]})
    assert status == 409  # another token's actor does not hold it
    events = (await api.queue.task_detail(first)).events
    assert [(e.kind, e.actor) for e in events if e.kind != "enqueued"] == [
        ("claimed", "agent:node"), ("completed", "agent:node")]
