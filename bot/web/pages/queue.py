"""The queue: per capability the counts by status, its caps and how full they are, and
the oldest task waiting to be claimed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aiohttp import web

from bot.web.app import WebApp, web_app
from bot.web.pages.base import EXT, context
from bot.web.render import as_json, html, wants_json
from taskqueue import Capability

SHOWN_STATUSES = ("pending", "running", "needs_approval", "approved", "succeeded", "failed",
                  "skipped", "expired", "cancelled")
# Their counts cover the last day, so their links list the last day's.
FINISHED = ("succeeded", "failed", "skipped", "expired", "cancelled")


@dataclass
class Line:
    """One capability's row."""

    capability: str
    counts: dict[str, int] = field(default_factory=dict)
    oldest_waiting: datetime | None = None
    caps: Capability | None = None

    def fill(self, cap: int | None, used: int) -> dict[str, Any] | None:
        if cap is None:
            return None
        return {"cap": cap, "used": used,
                "percent": 100 if cap == 0 else min(100, round(100 * used / cap))}

    @property
    def running(self) -> dict[str, Any] | None:
        return self.fill(self.caps.max_running if self.caps else None,
                         self.counts.get("running", 0))

    @property
    def parked(self) -> dict[str, Any] | None:
        return self.fill(self.caps.max_parked if self.caps else None,
                         self.counts.get("needs_approval", 0))

    def to_json(self) -> dict[str, Any]:
        return {"capability": self.capability, "counts": self.counts,
                "oldest_waiting_since": self.oldest_waiting,
                "max_running": self.running, "max_parked": self.parked,
                "daily_new": self.caps.daily_new if self.caps else None}


async def lines(app: WebApp) -> list[Line]:
    found: dict[str, Line] = {}
    for row in await app.queue.queue_summary():
        line = found.setdefault(row["capability"], Line(row["capability"]))
        line.counts[row["status"]] = int(row["n"])
        since = row["oldest_waiting_since"]
        if since is not None and (line.oldest_waiting is None or since < line.oldest_waiting):
            line.oldest_waiting = since
    for cap in await app.queue.capability_list():
        found.setdefault(cap.capability, Line(cap.capability)).caps = cap
    return [found[k] for k in sorted(found)]


async def queue_page(request: web.Request) -> web.Response:
    shown = await lines(web_app(request))
    if wants_json(request):
        return as_json({"capabilities": [line.to_json() for line in shown],
                        "note": "finished counts cover the last day"})
    return html("queue", context(request, "queue", "Queue", lines=shown,
                                 statuses=SHOWN_STATUSES, finished=FINISHED))


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/queue" + EXT, queue_page)
