"""The Tasks page: every task, found by capability, status, who decided, age and a text in
its payload or question; keyset pages in three orders; and the selection that the bulk
Retry and Cancel (bot/web/pages/bulk.py) act on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from bot.web.app import web_app
from bot.web.pages.base import EXT, context
from bot.web.render import as_json, html, wants_json
from taskqueue import BadInput, Status, Task
from taskqueue.queues.people import PeopleQueue

PAGE = 50
SORTS = {"newest": "Newest first", "oldest": "Oldest first", "updated": "Last changed first"}
# Age: created within the last … (newer), or more than … ago (older).
AGES: dict[str, tuple[str, timedelta, bool]] = {
    "1h": ("in the last hour", timedelta(hours=1), True),
    "1d": ("in the last day", timedelta(days=1), True),
    "7d": ("in the last week", timedelta(days=7), True),
    "gt7d": ("more than a week ago", timedelta(days=7), False),
    "gt30d": ("more than 30 days ago", timedelta(days=30), False),
}
STATUSES = [s.value for s in Status]
_KEYS = ("capability", "status", "decided_by", "age", "q", "sort")


@dataclass(frozen=True)
class Filters:
    """The list's filters as the query string gives them (empty: not filtered)."""

    capability: str = ""
    status: str = ""
    decided_by: str = ""
    age: str = ""
    q: str = ""
    sort: str = "newest"
    people: Mapping[str, str] = field(default_factory=dict, compare=False)

    def query(self, **more: str) -> str:
        """This list's query string (with `more`, e.g. a cursor)."""
        pairs = {k: getattr(self, k) for k in _KEYS if getattr(self, k)} | more
        if pairs.get("sort") == "newest":
            pairs.pop("sort")
        return urlencode(pairs)

    def names(self) -> list[str]:
        """The actor strings "who decided" stands for: the name as typed, the web account's
        `web:NAME`, and the people's accounts that record as that name."""
        name = self.decided_by.strip()
        if not name:
            return []
        found = {name, f"web:{name}"}
        found |= {f"web:{account}" for account, person in self.people.items()
                  if person.casefold() == name.casefold()}
        return sorted(found)

    def search_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"capability": self.capability or None,
                                "status": self.status or None, "decided_by": self.names(),
                                "text": self.q or None, "sort": self.sort}
        if self.age:
            _, span, newer = AGES[self.age]
            edge = datetime.now(UTC) - span
            args["created_after" if newer else "created_before"] = edge
        return args


def filters_of(query: Mapping[str, str], people: Mapping[str, str]) -> Filters:
    """The checked filters; BadInput names the first one that is wrong."""
    got = {k: query.get(k, "").strip() for k in _KEYS}
    if any(len(v) > 200 for v in got.values()):
        raise BadInput("a filter is at most 200 characters")
    if got["status"] and got["status"] not in STATUSES:
        raise BadInput(f"status is one of {', '.join(STATUSES)}")
    if got["age"] and got["age"] not in AGES:
        raise BadInput(f"age is one of {', '.join(AGES)}")
    if got["sort"] and got["sort"] not in SORTS:
        raise BadInput(f"sort is one of {', '.join(SORTS)}")
    return Filters(**{k: v for k, v in got.items() if v}, people=people)


def cursor_of(value: str) -> tuple[int, datetime] | None:
    """`ID.MICROSECONDS` (the last row's id and its time), as the page's Next link gives."""
    if not value:
        return None
    task_id, _, micros = value.partition(".")
    if not (task_id.isdigit() and micros.isdigit() and len(value) <= 40):
        raise BadInput("after: the Next link's cursor")
    return int(task_id), datetime.fromtimestamp(int(micros) / 1e6, UTC)


def cursor(task: Task, sort: str) -> str:
    at = task.updated_at if sort == "updated" else task.created_at
    seconds = int(at.timestamp())
    return f"{task.id}.{seconds * 1_000_000 + at.microsecond}"


async def matching(queue: PeopleQueue, filters: Filters, after: tuple[int, datetime] | None,
                   limit: int) -> list[Task]:
    return await queue.task_search(**filters.search_args(), after=after, limit=limit)


def row_json(task: Task) -> dict[str, Any]:
    a = task.approval
    return {"id": task.id, "capability": task.capability, "status": task.status.value,
            "created_at": task.created_at, "updated_at": task.updated_at,
            "attempts": task.attempts, "question": a.question if a else None,
            "decision": a.decision.value if a and a.decision else None,
            "decided_by": a.decided_by if a else None}


async def tasks_page(request: web.Request) -> web.Response:
    app = web_app(request)
    try:
        filters = filters_of(request.query, app.settings.people)
        after = cursor_of(request.query.get("after", ""))
        found = await matching(app.queue, filters, after, PAGE + 1)
    except BadInput as exc:
        if wants_json(request):
            return as_json({"error": str(exc)}, status=400)
        return html("tasks", context(request, "tasks", "Tasks", f=Filters(), rows=[],
                                     error=str(exc), more=None, **_choices()), status=400)
    rows, more = found[:PAGE], len(found) > PAGE
    next_query = filters.query(after=cursor(rows[-1], filters.sort)) if more else None
    if wants_json(request):
        return as_json({"tasks": [row_json(t) for t in rows],
                        "next": f"/tasks.json?{next_query}" if next_query else None})
    return html("tasks", context(request, "tasks", "Tasks", f=filters, rows=rows, more=more,
                                 next_query=next_query, first_page=after is None,
                                 error=None, **_choices()))


def _choices() -> dict[str, Any]:
    return {"statuses": STATUSES, "ages": AGES, "sorts": SORTS}


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/tasks" + EXT, tasks_page)
