"""The health signals in words: is the system broken (incident), is a person behind
(nudge), what expired, and when the reaper last ran and what it did."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.web.app import web_app
from bot.web.pages.base import EXT, context
from bot.web.render import ago, as_json, html, wants_json
from taskqueue import Signals, read_signals

# What the reaper did, in words: (one, many) forms, so "1 task was", "2 tasks were".
_REAPER_WORDS = {
    "requeued": ("task whose worker's lease ran out was put back in the queue",
                 "tasks whose worker's lease ran out were put back in the queue"),
    "orphans_requeued": ("task left running with no lease at all was put back in the queue",
                         "tasks left running with no lease at all were put back in the queue"),
    "failed": ("task that had used all its attempts was marked failed",
               "tasks that had used all their attempts were marked failed"),
    "expired": ("question nobody answered in time was closed as expired",
                "questions nobody answered in time were closed as expired"),
}


def _n(count: int, one: str, many: str) -> str:
    """`count` with its noun (and verb) agreeing: "1 question is", "2 questions are"."""
    return f"{count} {one if count == 1 else many}"


def sentences(s: Signals) -> dict[str, Any]:
    """What each signal means for the person reading it."""
    inc, nud = s.incident, s.nudge
    incident = (f"Something is wrong with the system: {_n(inc.count, 'task', 'tasks')} "
                f"could run but no worker has taken them for over {inc.age_hours:g} h (the "
                f"alarm is at more than {inc.threshold}). Check the workers and the service."
                if inc.firing else
                f"The system is keeping up: {_n(inc.count, 'task has', 'tasks have')} waited over "
                f"{inc.age_hours:g} h for a worker (the alarm is at more than {inc.threshold}).")
    nudge = (f"People are behind: {_n(nud.count, 'question has', 'questions have')} waited over "
             f"{nud.age_hours:g} h "
             f"for an answer (the nudge is at more than {nud.threshold}). Answer them in the "
             "inbox." if nud.firing else
             f"Nobody is far behind: {_n(nud.count, 'question has', 'questions have')} waited over "
             f"{nud.age_hours:g} h (the nudge is at more than {nud.threshold}).")
    reaper = ("The reaper has never run: crashed workers' tasks and unanswered questions "
              "are not being cleaned up yet." if s.reaper_at is None else
              f"The reaper last ran {ago(s.reaper_at)}.")
    did = [_n(n, *_REAPER_WORDS.get(k, (k, k))) for k, n in (s.reaper_outcome or {}).items()
           if n]
    return {"incident": incident, "nudge": nudge, "reaper": reaper,
            "reaper_did": did or (["it found nothing to do"] if s.reaper_at else []),
            "open": f"{_n(s.open_approvals, 'question is', 'questions are')} waiting for an "
                    "answer now.",
            "expired": f"{_n(s.expired_approvals, 'question', 'questions')} expired unanswered "
                       "in the last day.",
            "failed": f"{_n(s.failed_last_day, 'task', 'tasks')} failed for good in the last day."}


async def signals_page(request: web.Request) -> web.Response:
    app = web_app(request)
    s = await read_signals(app.queue, app.signal_config)
    words = sentences(s)
    if wants_json(request):
        return as_json(s.to_json() | {"words": words})
    return html("signals", context(request, "signals", "Signals", s=s, words=words))


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/signals" + EXT, signals_page)
