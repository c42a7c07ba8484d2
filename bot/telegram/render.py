"""Renders approval requests as Telegram HTML: one Jinja2 template per request kind."""

from __future__ import annotations

import difflib
import html
import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from bot.people import person_shown as person
from bot.people import progress_shown as progress
from taskqueue import Approval, Decision

if TYPE_CHECKING:
    from jinja2 import Environment

MAX_TEXT = 4096  # a message's text
MAX_CAPTION = 1024  # a photo's or document's caption
# Room kept free under MAX_TEXT for the outcome line added when the message is closed.
FOOTER_ROOM = 600
KINDS = ("job_application", "vm_change", "code_change", "build_publish")
_GENERIC_SKIP = {"kind", "title", "summary"}


@dataclass(frozen=True)
class Rendered:
    """An approval's message text (HTML) and, when it was too long, the full text as a file."""

    text: str
    document: bytes | None = None


@cache
def _env() -> Environment:
    """The templates, loaded with Jinja2 when the first message is rendered: a service
    that idles renders nothing, so it never loads Jinja2 (issue 26, goal 8)."""
    from jinja2 import ChainableUndefined, Environment, FileSystemLoader

    return Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=ChainableUndefined,
    )


def when(at: datetime | None) -> str:
    """A timestamp as people read it, in UTC."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "never"


def escape(text: object) -> str:
    """Text made safe for parse_mode HTML."""
    return html.escape(str(text), quote=False)


def _score(value: Any, out_of: Any = None) -> str | None:
    """`score_max` in the request says the scale (73 of 100); without it 0–1 is a share."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None if value in (None, "") else str(value)
    if isinstance(out_of, int | float) and not isinstance(out_of, bool) and out_of > 0:
        return f"{value:g}/{out_of:g}"
    return f"{value:.0%}" if 0 <= value <= 1 else f"{value:g}"


def _diff(request: dict[str, Any]) -> str:
    if isinstance(request.get("diff"), str):
        return str(request["diff"]).rstrip()
    before, after = request.get("before"), request.get("after")
    if before is None and after is None:
        return ""
    lines = [json.dumps(v, indent=2, sort_keys=True).splitlines() for v in (before, after)]
    return "\n".join(difflib.unified_diff(lines[0], lines[1], "before", "after", lineterm=""))


def _diffstat(request: dict[str, Any]) -> str:
    if isinstance(request.get("diffstat"), str):
        return str(request["diffstat"]).rstrip()
    files = request.get("files") or []
    rows = [f"{f.get('path', '?')} | +{f.get('added', 0)} -{f.get('removed', 0)}"
            for f in files if isinstance(f, dict)]
    return "\n".join(rows)


def _fields(request: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, value in request.items():
        if key in _GENERIC_SKIP:
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        out.append((key, shown if len(shown) <= 300 else shown[:299] + "…"))
    return out


def body(request: dict[str, Any]) -> str:
    """The request's summary, rendered by its kind's template (or the generic one)."""
    from jinja2 import TemplateNotFound  # here, as in _env(): not at start

    kind = request.get("kind")
    name = f"{kind}.html.j2" if kind in KINDS else "generic.html.j2"
    env = _env()
    try:
        template = env.get_template(name)
    except TemplateNotFound:  # pragma: no cover - the templates ship with the package
        template = env.get_template("generic.html.j2")
    return template.render(
        r=request, score=_score(request.get("score", request.get("match_score")),
                                request.get("score_max")),
        diff=_diff(request), diffstat=_diffstat(request), fields=_fields(request),
    ).strip()


def _page(approval: Approval, capability: str | None, summary: str, overflow: bool) -> str:
    return _env().get_template("approval.html.j2").render(
        approval=approval, capability=capability, body=Markup(summary), overflow=overflow,
        expires=when(approval.expires_at),
    ).strip()


def render_approval(approval: Approval, capability: str | None = None) -> Rendered:
    """The message for an approval; too long a request goes as a document beside it."""
    full = _page(approval, capability, body(approval.request), overflow=False)
    four_eyes = progress_line(approval)
    if len(full) + len(four_eyes) <= MAX_TEXT - FOOTER_ROOM:
        return Rendered(full + four_eyes)
    question = approval.question
    if len(question) > 1000:
        question = question[:999] + "…"
    short = _page(replace(approval, question=question), capability, "", overflow=True)
    return Rendered(short + four_eyes, plain_text(approval, capability).encode("utf-8"))


def progress_line(approval: Approval) -> str:
    """Four-eyes: how many people must approve, and who did so far ("" for one approve)."""
    if not approval.is_open or (approval.required == 1 and not approval.approvals):
        return ""
    if shown := progress(approval):
        return f"\n\n👥 {escape(shown)}"
    return f"\n\n👥 Needs {approval.required} approves from different people."


def plain_text(approval: Approval, capability: str | None = None) -> str:
    """The whole request as plain text, for a document."""
    return (f"Task {approval.task_id} ({capability or '?'}), approval {approval.id}\n"
            f"{approval.question}\n\n"
            + json.dumps(approval.request, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


_OUTCOMES = {
    Decision.APPROVED: "✅ <b>Approved</b>",
    Decision.REVISED: "📝 <b>Revise requested</b>",
    Decision.SKIPPED: "⏭ <b>Skipped</b>",
}


def outcome(approval: Approval, task_status: str | None = None,
            closed_as: str | None = None) -> str:
    """The line that replaces the buttons: the decision, who and when (or the expiry)."""
    if approval.decision is None and closed_as == "superseded":
        return "⏹ <b>Superseded</b>: the task asked a newer question (below)."
    if approval.decision is Decision.EXPIRED:
        return f"⌛ <b>Expired</b> at {when(approval.decided_at)}; no decision was made."
    if approval.decision is None:
        return f"⏹ <b>Closed</b>: the task is {escape(task_status or 'no longer waiting')}."
    line = (f"{_OUTCOMES[approval.decision]} by {escape(person(approval.decided_by))} "
            f"at {when(approval.decided_at)}")
    if approval.note:
        note = approval.note if len(approval.note) <= 300 else approval.note[:299] + "…"
        line += f"\nNote: {escape(note)}"
    return line


def closed_text(approval: Approval, capability: str | None, task_status: str | None,
                closed_as: str | None = None) -> str:
    """The message as it reads once settled: its original text and the outcome."""
    return (f"{render_approval(approval, capability).text}\n\n"
            f"{outcome(approval, task_status, closed_as)}")


def caption(text: str) -> str:
    """A caption cut to Telegram's limit."""
    return text if len(text) <= MAX_CAPTION else text[: MAX_CAPTION - 1] + "…"
