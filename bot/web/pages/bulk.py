"""Bulk Retry and Cancel: on the selected tasks or on every task matching the Tasks page's
filters, each moved on its own by the queue's rules (a refused one is listed with why), all
recorded with the person who asked."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import web
from multidict import MultiDictProxy

from bot.web.app import WebApp, web_app
from bot.web.pages.base import context
from bot.web.pages.tasks import filters_of, matching
from bot.web.render import as_json, html
from taskqueue import BadInput, Conflict, TaskNotFound

log = logging.getLogger("signoff.web.bulk")

# At most this many tasks in one bulk action (a larger set: narrow the filters, or repeat).
BULK_MAX = 1000
ACTIONS = {"retry": "retried", "cancel": "cancelled"}


@dataclass
class Outcome:
    """What a bulk action did: the tasks moved, and those refused with the reason."""

    action: str
    done: list[int] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ok": True, "action": self.action, "done": self.done, "refused": self.refused,
                "count": len(self.done) + len(self.refused)}


async def chosen(app: WebApp, form: MultiDictProxy[Any]) -> list[int]:
    """The task ids the form means: the ticked ones, or every one matching its filters."""
    if form.get("scope") == "matching":
        filters = filters_of({k: str(v) for k, v in form.items() if k != "id"},
                             app.settings.people)
        found = await matching(app.queue, replace(filters, sort="oldest"), None, BULK_MAX + 1)
        ids = [t.id for t in found]
    else:
        values = [str(v) for v in form.getall("id", [])]
        if not all(v.isdigit() and len(v) <= 18 for v in values):
            raise BadInput("id: task numbers")
        ids = sorted({int(v) for v in values})
    if not ids:
        raise BadInput("no task was chosen: tick some, or act on all matching")
    if len(ids) > BULK_MAX:
        raise BadInput(f"at most {BULK_MAX} tasks at a time; narrow the filters")
    return ids


async def run(app: WebApp, action: str, ids: list[int], actor: str) -> Outcome:
    """Each task moved in its own transaction, by the same rules as the CLI's retry and
    cancel: a task another actor moved first is refused, never moved twice."""
    outcome = Outcome(action)
    move = app.operator.task_retry if action == "retry" else app.operator.task_cancel
    for task_id in ids:
        try:
            await move(task_id, actor=actor)
        except (Conflict, TaskNotFound) as exc:
            outcome.refused.append({"id": task_id, "error": str(exc)})
        else:
            outcome.done.append(task_id)
    return outcome


async def bulk(request: web.Request) -> web.Response:
    app = web_app(request)
    form = await request.post()
    action = str(form.get("action", ""))
    wants = request.headers.get("Accept", "").startswith("application/json")
    try:
        if action not in ACTIONS:
            raise BadInput("action: retry or cancel")
        ids = await chosen(app, form)
    except BadInput as exc:
        if wants:
            return as_json({"ok": False, "error": str(exc)}, status=400)
        return html("refused", context(request, "tasks", "Nothing done", error=str(exc),
                                       back="/tasks"), status=400)
    actor = app.decider(request)
    outcome = await run(app, action, ids, actor)
    log.info("bulk %s by=%s asked=%d done=%d refused=%d", action, actor, len(ids),
             len(outcome.done), len(outcome.refused))
    if wants:
        return as_json(outcome.to_json())
    return html("bulk", context(request, "tasks", f"Bulk {action}", o=outcome,
                                verb=ACTIONS[action]))


async def count(request: web.Request) -> web.Response:
    """How many tasks match the filters (up to BULK_MAX + 1): what "all matching" would
    act on, for the page's confirmation."""
    app = web_app(request)
    try:
        filters = filters_of(request.query, app.settings.people)
    except BadInput as exc:
        return as_json({"error": str(exc)}, status=400)
    found = await matching(app.queue, replace(filters, sort="oldest"), None, BULK_MAX + 1)
    return as_json({"count": min(len(found), BULK_MAX), "more": len(found) > BULK_MAX,
                    "max": BULK_MAX})


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/tasks/bulk", bulk)
    router.add_get("/tasks/bulk/count.json", count)
