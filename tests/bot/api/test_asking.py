"""Asking over real HTTP: park a request, find it again by its key, long-poll for the
decision made by the CLI, and report it done; the task shows it all."""

from __future__ import annotations

import asyncio
import base64
import sys

from tests.bot.api.conftest import Api
from tests.taskqueue.factories import PNG, value


async def _cli(api: Api, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskqueue", *args, env=api.env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_ask_long_poll_cli_decision_then_done(api: Api) -> None:
    token = await api.token("ci", None, ("ask",))
    status, made, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "deploys", "question": "Deploy web 1.2?", "key": "run-1",
        "request": {"service": "web"}, "expires_in": 600,
        "files": [{"filename": "shot.png", "content_base64": base64.b64encode(PNG).decode()}]})
    assert status == 201, made
    assert made["status"] == "needs_approval" and made["url"].endswith(f"/tasks/{made['id']}")
    again_status, again, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "deploys", "question": "Deploy web 1.2?", "key": "run-1"})
    assert (again_status, again["id"]) == (200, made["id"])
    status, polled, _ = await api.call("GET", f"/api/v1/requests/{made['id']}?wait=0", token)
    assert (status, polled["status"], polled["decision"]) == (200, "needs_approval", None)

    waiting = asyncio.create_task(api.call("GET", f"/api/v1/requests/{made['id']}?wait=30",
                                           token))
    await asyncio.sleep(0.5)
    assert not waiting.done()
    code, _, err = await _cli(api, "approve", str(made["id"]), "--by", "ada")
    assert code == 0, err
    status, decided, _ = await asyncio.wait_for(waiting, 10)
    assert status == 200
    assert {k: decided[k] for k in ("id", "status", "decision", "decided_by", "note",
                                    "approvals", "required")} == {
        "id": made["id"], "status": "approved", "decision": "approved", "decided_by": "ada",
        "note": None, "approvals": 1, "required": 1}

    status, done, _ = await api.call("POST", f"/api/v1/requests/{made['id']}/done", token,
                                     json={"result": {"deployed": "1.2"}})
    assert (status, done["done"], done["done_by"]) == (200, True, "agent:ci")
    status, twice, _ = await api.call("POST", f"/api/v1/requests/{made['id']}/done", token,
                                      json={"result": {}})
    assert (status, twice["error"]) == (409, "conflict")
    reader = await api.token("reader", None, ("read",))
    status, detail, _ = await api.call("GET", f"/api/v1/tasks/{made['id']}", reader)
    assert status == 200 and detail["status"] == "succeeded"
    assert detail["result"] == {"deployed": "1.2"}
    assert [e["kind"] for e in detail["events"]] == ["asked", "decided", "request_done"]
    assert detail["events"][0]["actor"] == "agent:ci"
    [attachment] = detail["approvals"][0]["attachments"]
    async with api.http.get(f"{api.url}/api/v1/attachments/{attachment['id']}",
                            headers={"Authorization": f"Bearer {reader}"}) as r:
        assert r.status == 200 and await r.read() == PNG
        assert r.headers["Content-Disposition"] == "attachment"


async def test_multipart_ask_with_files(api: Api) -> None:
    token = await api.token("ci", None, ("ask",))
    form = aiohttp_form({"capability": "deploys", "question": "Ship it?",
                         "request": '{"diff": "+1 line"}', "expires_in": "60"},
                        [("diff.txt", b"+ one\n"), ("shot.png", PNG)])
    status, made, _ = await api.call("POST", "/api/v1/requests", token, data=form)
    assert status == 201, made
    approval = (await api.queue.task_get(made["id"])).approval
    assert approval is not None and approval.request == {"diff": "+1 line"}
    assert sorted(a.filename for a in approval.attachments) == ["diff.txt", "shot.png"]


def aiohttp_form(fields: dict[str, str], files: list[tuple[str, bytes]]) -> object:
    import aiohttp

    form = aiohttp.FormData()
    for k, v in fields.items():
        form.add_field(k, v)
    for name, data in files:
        form.add_field("file", data, filename=name)
    return form


async def test_a_new_capability_is_created_a_worker_one_is_refused(api: Api) -> None:
    token = await api.token("ci", None, ("ask",))
    status, _, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "brand_new", "question": "Go?"})
    assert status == 201
    assert await value(api.queue, "SELECT count(*) FROM capabilities "
                                  "WHERE capability = 'brand_new'") == 1
    status, refused, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "mail", "question": "Go?"})
    assert (status, refused["error"]) == (409, "conflict") and "mode pool" in refused["message"]
    assert await value(api.queue, "SELECT count(*) FROM tasks") == 1


async def test_required_approvals_and_the_floor(api: Api) -> None:
    await api.queue.capability_set("deploys", required_approvals=2)
    token = await api.token("ci", None, ("ask",))
    _, made, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "deploys", "question": "Go?", "required_approvals": 1})
    assert made["required"] == 2
