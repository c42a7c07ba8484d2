"""The OpenAPI document validates as 3.1, lists every route, and every path it lists
answers (with a token of every scope, over real HTTP)."""

from __future__ import annotations

from openapi_spec_validator import validate

from bot.api.routes import ROUTES
from tests.bot.api.conftest import Api
from tests.taskqueue.factories import claimed, parked


async def test_the_document_validates_and_lists_every_route(api: Api) -> None:
    status, doc, _ = await api.call("GET", "/api/v1/openapi.json")
    assert status == 200
    validate(doc)
    listed = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert listed == {(r.method, "/api/v1" + r.path) for r in ROUTES}
    ask = doc["paths"]["/api/v1/requests"]["post"]
    assert {"201", "200", "401", "403", "409", "413", "429"} <= set(ask["responses"])


async def test_every_documented_path_answers(api: Api) -> None:
    _, doc, _ = await api.call("GET", "/api/v1/openapi.json")
    token = await api.token("all", "ada")
    _, made, _ = await api.call("POST", "/api/v1/requests", token, json={
        "capability": "deploys", "question": "Go?", "files": [
            {"filename": "a.txt", "content_base64": "aGVsbG8K"}]})
    task = await claimed(api.queue, "mail")
    _, approval = await parked(api.queue, "other")
    ids = {"/requests": made["id"], "/approvals": approval.id, "/attachments": 1,
           "/tasks": task.id}
    bodies = {"post": {"capability": "mail", "worker": "w1", "claim": task.claim,
                       "question": "Q?", "decision": "approve", "state": {},
                       "error": "boom"}}
    for path, ops in doc["paths"].items():
        for method in ops:
            prefix = next(p for p in ids if path.startswith("/api/v1" + p))  \
                if "{id}" in path else None
            url = path.replace("{id}", str(ids[prefix])) if prefix else path
            status, body, _ = await api.call(method.upper(), url, token,
                                             json=bodies.get(method))
            assert status < 500 and status not in (404, 405), (method, url, status, body)
