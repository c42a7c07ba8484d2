"""The inbox: open approvals, oldest first, each with its evidence and Approve / Revise /
Skip; and the decision itself (a POST), recorded as the signed-in person."""

from __future__ import annotations

import json
import logging

from aiohttp import web

from bot.refusals import not_a_person, refusal_of
from bot.web.app import WebApp, web_app
from bot.web.pages.base import EXT, context, int_arg
from bot.web.pages.cards import Card, card
from bot.web.passkeys import origin
from bot.web.render import as_json, fragment, html, progress, wants_json
from bot.web.sessions import SESSION, Session
from taskqueue import (
    AlreadyApproved,
    Approval,
    Assertion,
    Conflict,
    Decision,
    NotAnApprover,
    NotFound,
    SignatureInvalid,
    SignatureRequired,
)

log = logging.getLogger("signoff.web.inbox")

# The inbox shows this many questions a page, the oldest first; `?after=ID` pages on.
PAGE = 25
CHOICES = {"approve": Decision.APPROVED, "revise": Decision.REVISED, "skip": Decision.SKIPPED}


def page_of(open_: list[int], after: int | None, limit: int = PAGE) -> tuple[list[int], int]:
    """The `limit` approval ids after `after` (keyset on the inbox's order; when that one was
    decided meanwhile, after its id), and the first one's position: the JSON's page, cut
    from the whole list it carries (the HTML page reads the same page in SQL,
    approval_list_open_page)."""
    start = 0
    if after is not None:
        start = open_.index(after) + 1 if after in open_ else next(
            (n for n, i in enumerate(open_) if i > after), len(open_))
    return open_[start:start + limit], start


def _after(request: web.Request) -> int | None:
    value = request.query.get("after", "")
    if not value:
        return None
    if not value.isdigit() or len(value) > 18:
        raise web.HTTPBadRequest(text="after: an approval id")
    return int(value)


async def inbox(request: web.Request) -> web.Response:
    app = web_app(request)
    await app.register_signing_link(request)
    after = _after(request)
    if wants_json(request):
        # The JSON's open_ids is every open id (the page's script checks its cards against
        # it), so this path reads the whole list and cuts its page from it.
        open_ = await app.queue.approval_list_open_ids()
        shown, _ = page_of(open_, after)
        cards = await page_cards(app, shown)
        return as_json({"open": len(open_), "approvals": [c.to_json() for c in cards],
                        "open_ids": open_})
    # The page and a count only: at 100,000 open approvals the whole list cost 200 ms.
    shown, start = await app.queue.approval_list_open_page(after, PAGE)
    total = await app.queue.approval_count_open()
    cards = await page_cards(app, shown)
    next_after = shown[-1] if start + len(shown) < total else None
    return html("inbox", context(request, "inbox", "Inbox", cards=cards, total=total,
                                 after=after, first=start + 1, limit=PAGE,
                                 next_after=next_after))


async def page_cards(app: WebApp, shown: list[int]) -> list[Card]:
    """The cards of a page's approval ids still open: its approvals and tasks in one read
    each."""
    approvals = [a for a in await app.queue.approval_get_many(shown) if a.is_open]
    tasks = {t.id: t for t in await app.queue.task_get_many([a.task_id for a in approvals])}
    return [await card(app, a, tasks.get(a.task_id)) for a in approvals]


async def card_fragment(request: web.Request) -> web.Response:
    """One approval's card (the page's script inserts new ones without a reload)."""
    app = web_app(request)
    try:
        approval = await app.queue.approval_get(int_arg(request, "id"))
    except NotFound:
        raise web.HTTPNotFound() from None
    shown = await card(app, approval)
    text = fragment("card", context(request, "inbox", "", c=shown))
    return web.Response(text=text, content_type="text/html", charset="utf-8")


def outcome(approval: Approval) -> dict[str, object]:
    return {"approval_id": approval.id, "task_id": approval.task_id,
            "decision": approval.decision.value if approval.decision else None,
            "decided_by": approval.decided_by, "decided_at": approval.decided_at,
            "note": approval.note, "required": approval.required,
            "approvals": [v.to_json() for v in approval.approvals],
            "progress": progress(approval), "reminded_at": approval.reminded_at,
            "escalated_at": approval.escalated_at}


async def approval_state(request: web.Request) -> web.Response:
    """Whether an approval is still open, and who decided what when (JSON)."""
    try:
        approval = await web_app(request).queue.approval_get(int_arg(request, "id"))
    except NotFound:
        return as_json({"error": "no such approval"}, status=404)
    task = await web_app(request).queue.task_get(approval.task_id)
    return as_json(outcome(approval) | {"task_status": task.status.value})


async def decide(request: web.Request) -> web.Response:
    app = web_app(request)
    approval_id = int_arg(request, "id")
    form = await request.post()
    choice = CHOICES.get(str(form.get("decision", "")))
    note = str(form.get("note", "")).replace("\r\n", "\n").strip() or None
    if choice is None:
        return _answer(request, approval_id, 400, "choose approve, revise or skip")
    if choice is Decision.REVISED and not note:
        return _answer(request, approval_id, 400, "a revise needs a note saying what to change")
    if app.settings.people and app.settings.people.get(_account(request)) is None:
        # People are configured: every decision resolves to one of them or is refused.
        return _answer(request, approval_id, 403, not_a_person("account", "web_account"))
    try:
        assertion = _assertion(request, form.get("assertion"))
        decided = await app.queue.approval_decide(approval_id, choice, app.decider(request),
                                                  note, assertion=assertion)
    except SignatureRequired:
        return _answer(request, approval_id, 403, "this capability counts only approves "
                       "signed with your passkey: approve here with a passkey (add one on "
                       "your Account page); nothing was recorded")
    except SignatureInvalid as exc:
        return _answer(request, approval_id, 403, f"{exc}")
    except NotAnApprover as exc:
        return _answer(request, approval_id, 403, refusal_of(exc))
    except (AlreadyApproved, Conflict, NotFound) as exc:
        return _answer(request, approval_id, 409, refusal_of(exc))
    if decided.is_open:  # four-eyes: counted, waiting for another person
        log.info("approval approved partly task=%s approval=%s (%d of %d)", decided.task_id,
                 decided.id, decided.approved_count, decided.required)
    else:
        log.info("approval decided task=%s approval=%s decision=%s by=%s", decided.task_id,
                 decided.id, choice.value, decided.decided_by)
    if request.headers.get("Accept", "").startswith("application/json"):
        return as_json({"ok": True, **outcome(decided)})
    raise web.HTTPSeeOther(f"/#approval-{approval_id}")


def _account(request: web.Request) -> str:
    session: Session | None = request.get(SESSION)
    return session.account if session else ""


def _assertion(request: web.Request, raw: object) -> Assertion | None:
    """The passkey assertion a signed approve carries (JSON from the page's script), made
    at this inbox's own origin; None when the form has none."""
    if not isinstance(raw, str) or not raw:
        return None
    try:
        credential = json.loads(raw)
    except ValueError:
        raise SignatureInvalid("the passkey assertion is not JSON: nothing recorded") from None
    return Assertion.from_browser(credential, origin(web_app(request), request))


def _answer(request: web.Request, approval_id: int, status: int, error: str) -> web.Response:
    if request.headers.get("Accept", "").startswith("application/json"):
        return as_json({"ok": False, "error": error, "approval_id": approval_id},
                       status=status)
    return html("refused", context(request, "inbox", "Not decided", error=error,
                                   approval_id=approval_id), status=status)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/", inbox)
    router.add_get("/inbox" + EXT, inbox)
    router.add_get(r"/approvals/{id:\d+}/card", card_fragment)
    router.add_get(r"/approvals/{id:\d+}" + EXT, approval_state)
    router.add_post(r"/approvals/{id:\d+}/decide", decide)
