"""The asking routes: POST /requests (park a request, or find the one its key made),
GET /requests/{id}?wait=S (long-poll for the decision) and POST /requests/{id}/done."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.api.app import Param, Route, api_of, task_id, token_of
from bot.api.bodies import (
    base64_files,
    json_field,
    multipart_fields,
    number_field,
    read_object,
    text_field,
    too_large,
)
from bot.api.errors import ApiError, json_response
from taskqueue import AskedRequest

# The longest long-poll, in seconds.
MAX_WAIT = 60


def request_json(request: web.Request, asked: AskedRequest) -> dict[str, Any]:
    """The request's JSON with the address of its page in the web inbox."""
    return asked.to_json() | {"url": f"{request.scheme}://{request.host}/tasks/{asked.id}"}


async def ask(request: web.Request) -> web.StreamResponse:
    api, token = api_of(request), token_of(request)
    bounds = api.bounds
    if request.content_type.startswith("multipart/"):
        if request.content_length is not None and request.content_length > bounds.json_body:
            raise too_large("the body", bounds.json_body)
        body, files = await multipart_fields(request, bounds)
    else:
        body = await read_object(request, bounds.json_body, empty_ok=False)
        files = base64_files(body, bounds)
    capability = text_field(body, "capability", required=True)
    question = text_field(body, "question", required=True)
    assert capability is not None and question is not None
    mode = api.modes.get(capability)
    if mode not in (None, "external"):
        raise ApiError(409, "conflict", f"capability {capability} has mode {mode}: its "
                       "worker owns its tasks; ask with a capability of mode external")
    required = number_field(body, "required_approvals", whole=True)
    asked, created = await api.asker.request_park(
        capability, question, asked_by=token.actor,
        request=json_field(body, "request", bounds), attachments=files,
        expires_in=number_field(body, "expires_in"),
        required_approvals=int(required) if required is not None else None,
        key=text_field(body, "key"))
    return json_response(request_json(request, asked), status=201 if created else 200)


async def request_status(request: web.Request) -> web.StreamResponse:
    api = api_of(request)
    text = request.query.get("wait", "0")
    try:
        wait = float(text)
    except ValueError:
        wait = -1.0
    if not 0 <= wait <= MAX_WAIT:
        raise ApiError(400, "bad_input", f"wait is 0 to {MAX_WAIT} seconds")
    asked = await api.asker.request_wait(task_id(request), wait, changed=api.waker.changed)
    return json_response(request_json(request, asked))


async def request_done(request: web.Request) -> web.StreamResponse:
    api, token = api_of(request), token_of(request)
    body = await read_object(request, api.bounds.plain_body)
    result = json_field(body, "result", api.bounds, obj=False)
    asked = await api.asker.request_done(task_id(request), token.actor, result)
    return json_response(request_json(request, asked))


ASK_BODY: dict[str, Any] = {
    "type": "object", "required": ["capability", "question"],
    "properties": {
        "capability": {"type": "string"}, "question": {"type": "string"},
        "request": {"type": "object", "description": "what is asked, as JSON (the evidence)"},
        "expires_in": {"type": "number", "description": "seconds (default: the capability's)"},
        "required_approvals": {"type": "integer", "minimum": 1},
        "key": {"type": "string", "description": "idempotency key: the same key, the same "
                                                 "request"},
        "files": {"type": "array", "items": {
            "type": "object", "required": ["filename", "content_base64"],
            "properties": {"filename": {"type": "string"},
                           "content_base64": {"type": "string"},
                           "content_type": {"type": "string"}}}}}}

ROUTES = [
    Route("POST", "/requests", ask, ("ask",), "Ask for a sign-off (park a request)",
          body=ASK_BODY, multipart=True,
          answers={201: "the new request", 200: "the request this key already made",
                   409: "the capability's worker owns its tasks (mode is not external)"}),
    Route("GET", "/requests/{id}", request_status, ("ask", "read"),
          "A request's status; long-polls up to `wait` seconds for the decision",
          query=(Param("wait", {"type": "number", "minimum": 0, "maximum": MAX_WAIT},
                       "seconds to wait for a decision (0 to 60)"),),
          answers={200: "the request"}),
    Route("POST", "/requests/{id}/done", request_done, ("ask",),
          "Report the approved action done, with its result",
          body={"type": "object", "properties": {"result": {}}},
          answers={200: "the request, done", 409: "not approved, or already done"}),
]
