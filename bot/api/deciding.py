"""The deciding routes, for people's own tools: GET /approvals?open=true and
POST /approvals/{id}/decision, recorded as the token's person."""

from __future__ import annotations

from aiohttp import web

from bot.api.app import Param, Route, api_of, task_id, token_of
from bot.api.bodies import read_object, text_field
from bot.api.errors import ApiError, json_response
from taskqueue import person_key

WORDS = {"approve": "approved", "revise": "revised", "skip": "skipped"}


async def approvals_open(request: web.Request) -> web.StreamResponse:
    if request.query.get("open", "true").lower() not in ("true", "1"):
        raise ApiError(400, "bad_input", "only open=true is listed here; read a task's "
                       "decided approvals at /api/v1/tasks/{id}")
    approvals = await api_of(request).people.approval_list_open()
    return json_response([a.to_json() for a in approvals])


async def decide(request: web.Request) -> web.StreamResponse:
    api, token = api_of(request), token_of(request)
    if token.person is None:
        raise ApiError(403, "no_person", f"token {token.name} has no person: it may ask, "
                       "never decide")
    if api.settings.people and person_key(token.person) not in api.settings.people:
        raise ApiError(403, "not_a_person", f"token {token.name}'s person {token.person} is "
                       "not among the configured people ([people.NAME]): nothing recorded")
    body = await read_object(request, api.bounds.plain_body, empty_ok=False)
    word = text_field(body, "decision", required=True)
    if word not in WORDS:
        raise ApiError(400, "bad_input", "decision is approve, revise or skip")
    note = text_field(body, "note")
    if word == "revise" and not (note or "").strip():
        raise ApiError(400, "bad_input", "a revise needs a note saying what to change")
    approval = await api.people.approval_decide(task_id(request), WORDS[word], token.person,
                                               note)
    return json_response(approval.to_json())


ROUTES = [
    Route("GET", "/approvals", approvals_open, ("read", "decide"),
          "The open approvals, oldest first",
          query=(Param("open", {"type": "boolean", "default": True},
                       "only open approvals (the only listing)"),),
          answers={200: "a list of approvals (the shape of `signoff show --json`'s)"}),
    Route("POST", "/approvals/{id}/decision", decide, ("decide",),
          "Decide an open approval as the token's person",
          body={"type": "object", "required": ["decision"],
                "properties": {"decision": {"enum": list(WORDS)},
                               "note": {"type": "string"}}},
          answers={200: "the approval (open still when more approvals are required)",
                   403: "the token has no person, or the person is not an approver",
                   409: "already decided, expired, or the person already approved"}),
]
