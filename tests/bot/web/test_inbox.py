"""The inbox in Chromium: evidence shown, decisions made here or elsewhere, live updates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from taskqueue import Decision, NewAttachment, Status
from tests.bot.web.conftest import Server, eventually, live, park, screenshot, sign_in
from tests.bot.web.evidence_files import form_screenshot, two_page_pdf

pytestmark = pytest.mark.slow  # a real Chromium

ROOT = Path(__file__).resolve().parents[3]
JOB = {"kind": "job_application", "role": "Engineer <script>alert(1)</script>",
       "company": "A&B", "location": "Remote", "score": 87, "score_max": 100,
       "top_terms": ["python", "postgres"], "url": "https://jobs.example/1",
       "fields": [{"field": "Name", "value": "Ada"}]}


def _status(server: Server, task_id: int) -> Status:
    return server.run(server.queue.task_get(task_id)).status


def test_the_inbox_shows_the_screenshot_and_the_pdf_pages_and_approve_resolves_it(
        server: Server, page: Page, browser: Browser, shots: Path) -> None:
    png, pdf = form_screenshot(browser), two_page_pdf()
    approval = server.run(park(server.queue, "Send the application?", request=JOB,
                               attachments=(NewAttachment("form.png", png, "image/png"),
                                            NewAttachment("cv.pdf", pdf, "application/pdf"))))
    sign_in(page)
    card = page.locator(f"#approval-{approval.id}")
    expect(card.locator("h2")).to_have_text("Send the application?")
    expect(card.locator(".lead")).to_contain_text("Engineer <script>alert(1)</script>")
    shot = card.locator("img.shot")
    expect(shot).to_have_count(1)
    pages = card.locator("img.page")
    expect(pages).to_have_count(2)
    for img in (shot, pages.nth(0), pages.nth(1)):
        img.scroll_into_view_if_needed()
        eventually(lambda img=img: img.evaluate("i => i.complete && i.naturalWidth > 100"))
    # At its natural size (800 px), not stretched to the card's width (issue 41).
    assert shot.evaluate("i => i.clientWidth === i.naturalWidth && i.naturalWidth === 800")
    expect(card.locator("a[download]", has_text="cv.pdf")).to_have_attribute(
        "href", f"/attachments/{approval.attachments[1].id}")
    screenshot(page, shots, "inbox")
    [shown] = page.request.get("/inbox.json").json()["approvals"]
    pdf_id = approval.attachments[1].id
    assert [a["shown_as"] for a in shown["attachments"]] == ["image", "pdf"]
    assert shown["attachments"][1]["pages"] == [f"/attachments/{pdf_id}/pages/1.png",
                                                f"/attachments/{pdf_id}/pages/2.png"]
    assert page.request.get(f"/attachments/{pdf_id}/pages/3.png").status == 404
    live(page)
    card.locator("button[value=approve]").click()
    expect(card.locator(".decided")).to_contain_text("Approved by alice")
    task = server.run(server.queue.task_get(approval.task_id))
    assert task.status is Status.APPROVED and task.approval is not None
    assert task.approval.decided_by == "web:alice"


def test_revise_with_a_note_and_skip_resolve_their_tasks(server: Server, page: Page) -> None:
    first = server.run(park(server.queue, "First?"))
    second = server.run(park(server.queue, "Second?"))
    sign_in(page)
    live(page)
    one = page.locator(f"#approval-{first.id}")
    one.locator("button[value=revise]").click()
    expect(one.locator(".error")).to_contain_text("needs a note")
    assert _status(server, first.task_id) is Status.NEEDS_APPROVAL
    one.locator("textarea").fill("Shorter, please.")
    one.locator("button[value=revise]").click()
    expect(one.locator(".decided")).to_contain_text("Revise requested by alice")
    two = page.locator(f"#approval-{second.id}")
    two.locator("button.skip").click()
    assert _status(server, second.task_id) is Status.NEEDS_APPROVAL  # asked, not skipped
    two.get_by_role("button", name="Confirm skip").click()
    expect(two.locator(".decided")).to_contain_text("Skipped by alice")
    revised = server.run(server.queue.task_get(first.task_id))
    assert revised.decision is Decision.REVISED and revised.approval is not None
    assert revised.approval.note == "Shorter, please."
    assert _status(server, second.task_id) is Status.SKIPPED


def test_a_cli_decision_removes_the_buttons_and_names_who_and_a_park_appears(
        server: Server, page: Page) -> None:
    approval = server.run(park(server.queue, "Decide me elsewhere?"))
    sign_in(page)
    live(page)
    card = page.locator(f"#approval-{approval.id}")
    expect(card.locator("button[value=approve]")).to_be_visible()
    done = subprocess.run(
        [sys.executable, "-m", "taskqueue", "approve", str(approval.task_id), "--by", "carol"],
        env=os.environ | {"DATABASE_URL": server.dsn}, cwd=ROOT, capture_output=True,
        text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    expect(card.locator(".decided")).to_contain_text("Approved by carol")
    expect(card.locator("button")).to_have_count(0)
    later = server.run(park(server.queue, "A new question?"))
    expect(page.locator(f"#approval-{later.id} h2")).to_have_text("A new question?")
    expect(page.locator("#open-count")).to_have_text("1")


def test_a_second_decision_is_refused_naming_who_decided_first(
        server: Server, page: Page) -> None:
    approval = server.run(park(server.queue, "Race?"))
    sign_in(page)
    live(page)
    token = page.locator("meta[name=csrf-token]").get_attribute("content")
    server.run(server.queue.approval_decide(approval.id, Decision.SKIPPED, "web:bob"))
    late = page.request.post(f"/approvals/{approval.id}/decide",
                             form={"decision": "approve", "csrf_token": token or ""},
                             headers={"Accept": "application/json"})
    assert late.status == 409 and late.json()["error"] == "this was already skipped by bob"
    expect(page.locator(f"#approval-{approval.id} .decided")).to_contain_text("Skipped by bob")
    assert _status(server, approval.task_id) is Status.SKIPPED


def test_the_decision_buttons_are_touch_targets_at_both_widths(server: Server,
                                                               page: Page) -> None:
    approval = server.run(park(server.queue, "Big enough to tap?"))
    sign_in(page)
    live(page)
    buttons = page.locator(f"#approval-{approval.id} .buttons button:visible")
    page.locator(f"#approval-{approval.id} button.skip").click()  # and Confirm skip, Keep it
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 844})
        expect(buttons).to_have_count(5)
        for n in range(5):
            box = buttons.nth(n).bounding_box()
            assert box is not None and box["height"] >= 44 and box["width"] >= 44, (width, box)


def test_the_inbox_shows_25_a_page_and_pages_on_by_keyset(server: Server, page: Page) -> None:
    approvals = [server.run(park(server.queue, f"Question {n}?")) for n in range(28)]
    sign_in(page)
    live(page)
    cards = page.locator("article.card")
    expect(cards).to_have_count(25)
    expect(page.locator("#open-count")).to_have_text("28")
    expect(page.locator("#shown-range")).to_have_text("Showing 1–25 of 28, oldest first.")
    page.click("#next-page")
    expect(cards).to_have_count(3)
    shown = [int(x) for x in cards.evaluate_all("cs => cs.map(c => c.dataset.approval)")]
    assert shown == [a.id for a in approvals[25:]]
    live(page)
    server.run(server.queue.approval_decide(approvals[0].id, "approved", "bob"))  # page 1's
    server.run(park(server.queue, "A newer one?"))
    expect(cards).to_have_count(4)  # the newest joins the last page; none is marked decided
    expect(page.locator("article.card.closed")).to_have_count(0)
    doc = page.request.get(f"/inbox.json?after={approvals[24].id}").json()
    assert [a["id"] for a in doc["approvals"]][:3] == [a.id for a in approvals[25:]]
    assert doc["open"] == 28 and len(doc["open_ids"]) == 28
    assert page.request.get("/inbox.json?after=x").status == 400
