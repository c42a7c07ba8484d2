"""The reading routes: tasks (a list, one task with its approvals and events) and
attachments, in the shapes of the CLI's `--json`."""

from __future__ import annotations

from aiohttp import web

from bot.api.app import Param, Route, api_of, task_id
from bot.api.errors import ApiError, json_response
from taskqueue import BadInput

MAX_LIST = 1000


async def tasks_list(request: web.Request) -> web.StreamResponse:
    q = request.query
    try:
        limit = int(q.get("limit", "100"))
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_LIST:
        raise ApiError(400, "bad_input", f"limit is 1 to {MAX_LIST}")
    try:
        tasks = await api_of(request).people.task_list(
            status=q.get("status"), capability=q.get("capability"), limit=limit)
    except BadInput as exc:
        raise ApiError(400, "bad_input", str(exc)) from None
    return json_response([t.to_json() for t in tasks])


async def task_show(request: web.Request) -> web.StreamResponse:
    detail = await api_of(request).people.task_detail(task_id(request))
    return json_response(detail.to_json())


async def attachment_download(request: web.Request) -> web.StreamResponse:
    found = await api_of(request).people.attachment_get(task_id(request))
    return web.Response(body=found.data or b"", content_type="application/octet-stream",
                        headers={"X-Content-Type": found.content_type,
                                 "Content-Disposition": "attachment"})


ROUTES = [
    Route("GET", "/tasks", tasks_list, ("read",), "Tasks, oldest first",
          query=(Param("status", {"type": "string"}, "only this status"),
                 Param("capability", {"type": "string"}, "only this capability"),
                 Param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIST},
                       "at most this many (default 100)")),
          answers={200: "a list of tasks (`signoff ls --json`)"}),
    Route("GET", "/tasks/{id}", task_show, ("read",),
          "A task with its approvals and events (`signoff show --json`)",
          answers={200: "the task"}),
    Route("GET", "/attachments/{id}", attachment_download, ("read",),
          "An attachment's bytes (as a download; its type in X-Content-Type)",
          answers={200: "the file"}),
]
