"""A request asked from outside a worker (the API, `signoff ask`, MCP) in the inbox, in
Chromium: shown with its evidence, approved here, heard by the asker's wait, reported done,
and the done result shown on the task's page."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from taskqueue import NewAttachment, Status
from tests.bot.web.conftest import Server, live, screenshot, sign_in

pytestmark = pytest.mark.slow  # a real Chromium


def test_an_asked_request_is_decided_in_the_inbox_and_its_done_result_shown(
        server: Server, page: Page, shots: Path) -> None:
    asked, _ = server.run(server.queue.request_park(
        "deploys", "Deploy web 1.2 to production?", asked_by="agent:ci",
        request={"service": "web", "version": "1.2"},
        attachments=[NewAttachment("plan.txt", b"+ web 1.1 -> 1.2\n")]))
    sign_in(page)
    card = page.locator(f"#approval-{asked.approval.id}")
    expect(card.locator("h2")).to_have_text("Deploy web 1.2 to production?")
    expect(card).to_contain_text("plan.txt")
    screenshot(page, shots, "42-asked-inbox")
    live(page)
    card.locator("button[value=approve]").click()
    expect(card.locator(".decided")).to_contain_text("Approved by alice")
    heard = server.run(server.queue.request_wait(asked.id, 10))
    assert (heard.status, heard.approval.decided_by) == ("approved", "web:alice")
    assert server.run(server.queue.task_get(asked.id)).status is Status.SUCCEEDED
    server.run(server.queue.request_done(asked.id, "agent:ci", {"deployed": "1.2"}))
    page.goto(f"/tasks/{asked.id}")
    expect(page.locator("pre.json", has_text="deployed")).to_contain_text('"deployed": "1.2"')
    # The history in words (issue 41), the raw event kind folded beside it.
    expect(page.locator("ol.history")).to_contain_text("request done by agent:ci")
    expect(page.locator("ol.history code.detail").last).to_contain_text("request_done")
    screenshot(page, shots, "42-asked-task")
