"""A task: status, payload, state, events, every approval with who decided what and when,
its attachments and last error; Retry and Cancel where the queue's transitions allow."""

from __future__ import annotations

from aiohttp import web

from bot.web.app import web_app
from bot.web.pages.base import EXT, context, int_arg
from bot.web.pages.cards import evidence
from bot.web.render import as_json, html, wants_json
from taskqueue import TRANSITIONS, Conflict, Status, TaskNotFound


def allowed_moves(status: Status) -> list[str]:
    """The operator moves the queue allows from `status` (what the CLI's retry and cancel
    would accept)."""
    return [call for call in ("retry", "cancel")
            if any(old is status for old, _ in TRANSITIONS[call])]


async def task_page(request: web.Request) -> web.Response:
    app = web_app(request)
    try:
        detail = await app.queue.task_detail(int_arg(request, "id"))
    except TaskNotFound:
        if wants_json(request):
            return as_json({"error": "no such task"}, status=404)
        return html("missing", context(request, "task", "No such task",
                                       what=f"task {request.match_info['id']}"), status=404)
    moves = allowed_moves(detail.task.status)
    if wants_json(request):
        return as_json(detail.to_json() | {"allowed": moves})
    files = {a.id: [await evidence(app, f) for f in a.attachments] for a in detail.approvals}
    signed = (await app.queue.capability_get(detail.task.capability)).signed_approvals
    return html("task", context(request, "task", f"Task {detail.task.id}", d=detail,
                                t=detail.task, moves=moves, files=files, signed=signed,
                                error=request.query.get("error")))


async def move(request: web.Request) -> web.Response:
    app = web_app(request)
    task_id = int_arg(request, "id")
    call = request.match_info["call"]
    actor = app.decider(request)
    try:
        if call == "retry":
            await app.operator.task_retry(task_id, actor=actor)
        else:
            await app.operator.task_cancel(task_id, actor=actor)
    except TaskNotFound:
        raise web.HTTPNotFound() from None
    except Conflict as exc:
        return html("refused", context(request, "task", "Not done", error=str(exc),
                                       task_id=task_id), status=409)
    raise web.HTTPSeeOther(f"/tasks/{task_id}")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get(r"/tasks/{id:\d+}" + EXT, task_page)
    router.add_post(r"/tasks/{id:\d+}/{call:retry|cancel}", move)
