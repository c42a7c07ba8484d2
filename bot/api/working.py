"""The working routes, for workers in any language: claim, then heartbeat, save state,
release, park, complete or fail, each fenced on the worker and its claim token exactly as
the CLI's and the Python API's (a lost claim: 409 lease_lost). The worker's name defaults
to the token's actor, so its events are recorded as the token's person or agent:NAME."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.api.app import Route, api_of, task_id, token_of
from bot.api.bodies import base64_files, json_field, number_field, read_object, text_field
from bot.api.errors import ApiError, json_response
from taskqueue.queues.worker import WorkerQueue


async def _fenced(request: web.Request, limit_files: bool = False
                  ) -> tuple[WorkerQueue, dict[str, Any], dict[str, Any]]:
    """The queue, the body, and the fence (task id, worker, claim) every call needs."""
    api = api_of(request)
    bounds = api.bounds
    body = await read_object(request, bounds.json_body if limit_files else bounds.plain_body,
                             empty_ok=False)
    claim = text_field(body, "claim", required=True)
    return api.worker, body, {"task_id": task_id(request), "worker": _worker(request, body),
                             "claim": claim}


def _worker(request: web.Request, body: dict[str, Any]) -> str:
    """The body's `worker`, else the token's actor (its person, or agent:NAME)."""
    return text_field(body, "worker") or token_of(request).actor


async def claim(request: web.Request) -> web.StreamResponse:
    api = api_of(request)
    body = await read_object(request, api.bounds.plain_body, empty_ok=False)
    capability = text_field(body, "capability", required=True)
    assert capability is not None
    task = await api.worker.task_claim(capability, _worker(request, body),
                                      lease=number_field(body, "lease"))
    if task is None:
        return web.Response(status=204)
    return json_response(task.to_json())


async def heartbeat(request: web.Request) -> web.StreamResponse:
    queue, body, f = await _fenced(request)
    task = await queue.task_heartbeat(f["task_id"], f["worker"], claim=f["claim"],
                                      lease=number_field(body, "lease"))
    return json_response(task.to_json())


async def save_state(request: web.Request) -> web.StreamResponse:
    queue, body, f = await _fenced(request)
    state = json_field(body, "state", api_of(request).bounds)
    if state is None:
        raise ApiError(400, "bad_input", "`state` is required")
    task = await queue.task_save_state(f["task_id"], f["worker"], state, claim=f["claim"])
    return json_response(task.to_json())


async def release(request: web.Request) -> web.StreamResponse:
    queue, body, f = await _fenced(request)
    task = await queue.task_release(
        f["task_id"], f["worker"], claim=f["claim"],
        state=json_field(body, "state", api_of(request).bounds),
        delay=number_field(body, "delay") or 0, reason=text_field(body, "reason"))
    return json_response(task.to_json())


async def park(request: web.Request) -> web.StreamResponse:
    queue, body, f = await _fenced(request, limit_files=True)
    bounds = api_of(request).bounds
    question = text_field(body, "question", required=True)
    assert question is not None
    required = number_field(body, "required_approvals", whole=True)
    approval = await queue.task_park(
        f["task_id"], f["worker"], question, claim=f["claim"],
        request=json_field(body, "request", bounds), attachments=base64_files(body, bounds),
        expires_in=number_field(body, "expires_in"),
        state=json_field(body, "state", bounds),
        required_approvals=int(required) if required is not None else None)
    return json_response(approval.to_json())


async def complete(request: web.Request) -> web.StreamResponse:
    queue, body, f = await _fenced(request)
    task = await queue.task_complete(f["task_id"], f["worker"], claim=f["claim"],
                                     result=json_field(body, "result", api_of(request).bounds,
                                                       obj=False))
    return json_response(task.to_json())


async def fail(request: web.Request) -> web.StreamResponse:
    queue, body, f = await _fenced(request)
    error = text_field(body, "error", required=True)
    retry = body.get("retry", True)
    if not isinstance(retry, bool):
        raise ApiError(400, "bad_json", "`retry` must be true or false")
    assert error is not None
    task = await queue.task_fail(f["task_id"], f["worker"], error, claim=f["claim"],
                                 retry=retry)
    return json_response(task.to_json())


_WORKER = {"type": "string", "description": "default: the token's person, or agent:NAME"}


def _fence_body(**more: Any) -> dict[str, Any]:
    required = ["claim", *[k for k, v in more.items() if v.pop("required", False)]]
    return {"type": "object", "required": required,
            "properties": {"worker": _WORKER,
                           "claim": {"type": "string", "description": "the claim token"},
                           **more}}


_LOST = {200: "the task", 404: "no such task", 409: "lease_lost: the claim is no longer held"}

ROUTES = [
    Route("POST", "/work/claim", claim, ("work",), "Claim the next task of a capability",
          body={"type": "object", "required": ["capability"],
                "properties": {"capability": {"type": "string"}, "worker": _WORKER,
                               "lease": {"type": "number"}}},
          answers={200: "the claimed task, its `claim` the token to fence on",
                   204: "nothing to claim"}),
    Route("POST", "/tasks/{id}/heartbeat", heartbeat, ("work",), "Extend the lease",
          body=_fence_body(lease={"type": "number"}), answers=_LOST),
    Route("POST", "/tasks/{id}/state", save_state, ("work",), "Save state, keep the claim",
          body=_fence_body(state={"type": "object", "required": True}), answers=_LOST),
    Route("POST", "/tasks/{id}/release", release, ("work",), "Put the task back to pending",
          body=_fence_body(state={"type": "object"}, delay={"type": "number"},
                           reason={"type": "string"}), answers=_LOST),
    Route("POST", "/tasks/{id}/park", park, ("work",), "Stop at a question for a person",
          body=_fence_body(question={"type": "string", "required": True},
                           request={"type": "object"}, expires_in={"type": "number"},
                           state={"type": "object"},
                           required_approvals={"type": "integer", "minimum": 1},
                           files={"type": "array", "items": {"type": "object"}}),
          answers={**_LOST, 200: "the new approval"}),
    Route("POST", "/tasks/{id}/complete", complete, ("work",), "Finish as succeeded",
          body=_fence_body(result={}), answers=_LOST),
    Route("POST", "/tasks/{id}/fail", fail, ("work",), "Record a failure",
          body=_fence_body(error={"type": "string", "required": True},
                           retry={"type": "boolean"}), answers=_LOST),
]
