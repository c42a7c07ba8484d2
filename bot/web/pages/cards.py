"""One open approval as the inbox shows it: its task, request and evidence, ready for the
`card` template (and its JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from bot.web.app import WebApp
from bot.web.evidence import before_after, decoded, diff_html, kind_of
from bot.web.render import progress
from taskqueue import Approval, Attachment, Task

REQUEST_KINDS = ("job_application", "vm_change", "code_change", "build_publish")


@dataclass(frozen=True)
class Evidence:
    """One attachment and what the page shows of it."""

    item: Attachment
    kind: str
    pages: int = 0
    text: str = ""
    patch: Markup | None = None


@dataclass(frozen=True)
class Card:
    approval: Approval
    task: Task
    evidence: tuple[Evidence, ...]
    # The capability counts only passkey-signed approves: Approve asks the passkey first.
    signed: bool = False

    @property
    def template(self) -> str:
        kind = self.approval.request.get("kind")
        return f"requests/{kind if kind in REQUEST_KINDS else 'generic'}.html"

    @property
    def rows(self) -> list[Any]:
        return before_after(self.approval.request)

    @property
    def request_diff(self) -> Markup | None:
        diff = self.approval.request.get("diff")
        return diff_html(diff) if isinstance(diff, str) and diff.strip() else None

    def to_json(self) -> dict[str, Any]:
        doc = self.approval.to_json()
        doc["capability"] = self.task.capability
        doc["task_status"] = self.task.status.value
        doc["progress"] = progress(self.approval)
        doc["signed_approvals"] = self.signed
        for shown, item in zip(self.evidence, doc["attachments"], strict=True):
            item["shown_as"] = shown.kind
            item["url"] = f"/attachments/{shown.item.id}"
            if shown.kind == "pdf":
                item["pages"] = [f"/attachments/{shown.item.id}/pages/{n}.png"
                                 for n in range(1, shown.pages + 1)]
        return doc


async def evidence(app: WebApp, meta: Attachment) -> Evidence:
    """What the page shows of one attachment; bytes are read only when not seen before."""
    kind = kind_of(meta)
    if kind in ("image", "file"):
        return Evidence(meta, kind)
    if kind == "pdf":
        pages = app.pdfs.known_count(meta.sha256)
        if pages is None:
            pages = await app.pdfs.count(await app.queue.attachment_get(meta.id))
        return Evidence(meta, kind, pages=pages)
    shown = app.shown.get(kind, meta.sha256)
    if shown is None:
        text = decoded((await app.queue.attachment_get(meta.id)).data)
        shown = diff_html(text) if kind == "patch" else text
        app.shown.put(kind, meta.sha256, shown)
    if kind == "patch":
        return Evidence(meta, kind, patch=Markup(shown))
    return Evidence(meta, kind, text=str(shown))


async def card(app: WebApp, approval: Approval, task: Task | None = None) -> Card:
    task = task or await app.queue.task_get(approval.task_id)
    shown = tuple([await evidence(app, a) for a in approval.attachments])
    signed = (await app.queue.capability_get(task.capability)).signed_approvals
    return Card(approval, task, shown, signed)
