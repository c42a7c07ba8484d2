"""Access to the web inbox: sign-in required, CSRF, rate limits, escaping, downloads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from bot.web.ratelimit import LoginLimiter
from taskqueue import NewAttachment, Status
from tests.bot.web.conftest import PASSWORD, Server, park, screenshot, sign_in

pytestmark = pytest.mark.slow  # a real Chromium

ROOT = Path(__file__).resolve().parents[3]
# A 1x1 PNG.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082")
EVIL = "<script>alert('x')<img src=x onerror=alert(1)>.html"  # no / in file names


def test_nothing_is_served_without_signing_in(server: Server, page: Page) -> None:
    approval = server.run(park(server.queue, "Secret question?", attachments=(
        NewAttachment("a.txt", b"secret bytes", "text/plain"),)))
    page.goto("/queue?format=html&x=1")
    parts = urlsplit(page.url)
    assert parts.path == "/login" and parse_qs(parts.query)["next"] == ["/queue?format=html&x=1"]
    expect(page.locator("main")).not_to_contain_text("Secret question?")
    for path in ("/inbox.json", f"/tasks/{approval.task_id}.json", "/queue?format=json",
                 f"/attachments/{approval.attachments[0].id}", "/events"):
        answer = page.request.get(path, max_redirects=0)
        assert answer.status in (303, 401), path
        assert b"secret" not in answer.body()
    forged = page.request.post(f"/approvals/{approval.id}/decide",
                               form={"decision": "approve"}, max_redirects=0)
    assert forged.status in (401, 403)
    assert server.run(server.queue.task_get(approval.task_id)).status is Status.NEEDS_APPROVAL


def test_a_post_without_its_csrf_token_is_refused(server: Server, page: Page) -> None:
    approval = server.run(park(server.queue, "Forge me?"))
    sign_in(page)
    for form in ({"decision": "approve"}, {"decision": "approve", "csrf_token": "forged"}):
        answer = page.request.post(f"/approvals/{approval.id}/decide", form=form)
        assert answer.status == 403 and "CSRF" in answer.text()
    answer = page.request.post(f"/tasks/{approval.task_id}/cancel", form={})
    assert answer.status == 403
    assert server.run(server.queue.task_get(approval.task_id)).status is Status.NEEDS_APPROVAL


def test_the_session_cookie_and_the_headers(server: Server, page: Page) -> None:
    sign_in(page)
    [cookie] = [c for c in page.context.cookies() if c["name"] == "signoff_session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    answer = page.request.get("/")
    csp = answer.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    scripts = page.locator("script")
    assert all(s.get_attribute("src") for s in scripts.all())  # no inline script at all


def test_sign_in_attempts_are_rate_limited(server: Server, browser: Browser) -> None:
    context = browser.new_context(base_url=server.url)
    try:
        page = context.new_page()
        for _ in range(5):
            sign_in_attempt(page, "bob", "wrong password")
            expect(page.locator(".error")).to_have_text("Wrong name or password.")
        sign_in_attempt(page, "bob", PASSWORD)  # right, but too late
        expect(page.locator(".error")).to_contain_text("Too many failed attempts")
        assert not [c for c in context.cookies() if c["name"] == "signoff_session"]
    finally:
        context.close()


def sign_in_attempt(page: Page, name: str, password: str) -> None:
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def test_script_in_a_title_and_a_file_name_is_text_and_html_is_downloaded(
        server: Server, page: Page) -> None:
    approval = server.run(park(server.queue, "<script>alert('q')</script>", request={
        "kind": "job_application", "role": "<script>alert('t')</script>", "company": "X"},
        attachments=(NewAttachment(EVIL, b"<script>document.title='owned'</script>",
                                   "text/html"),)))
    sign_in(page)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    card = page.locator(f"#approval-{approval.id}")
    expect(card.locator("h2")).to_have_text("<script>alert('q')</script>")
    expect(card.locator(".lead")).to_contain_text("<script>alert('t')</script>")
    link = card.locator("figcaption a")
    expect(link).to_have_text(EVIL)
    with page.expect_download() as got:
        link.click()
    assert got.value.suggested_filename.endswith(".html")
    answer = page.request.get(f"/attachments/{approval.attachments[0].id}")
    assert answer.headers["content-disposition"].startswith("attachment;")
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert page.title() != "owned" and not dialogs
    view = page.request.get(f"/attachments/{approval.attachments[0].id}/view",
                            max_redirects=0)
    assert view.status == 303  # only images are ever shown inline


def test_it_refuses_a_public_address_with_no_account(dsn: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "taskqueue", "web", "--listen", "0.0.0.0:0"],
        env=os.environ | {"DATABASE_URL": dsn}, cwd=ROOT, capture_output=True, text=True,
        timeout=60, check=False)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert "with no account" in line and "signoff web user add" in line


def test_the_limit_holds_per_address_across_names_and_a_success_clears_the_name() -> None:
    limiter = LoginLimiter(max_failures=3, window=3600)
    for name in ("a", "b", "c"):
        limiter.failed(name, "10.0.0.1")
    assert limiter.retry_after("someone-else", "10.0.0.1") > 0  # the address is spent
    assert limiter.retry_after("a", "10.0.0.2") == 0  # one failure for a: still allowed
    for _ in range(3):
        limiter.failed("d", "10.0.0.3")
    assert limiter.retry_after("d", "10.0.0.4") > 0  # the name is spent, from anywhere
    limiter.succeeded("d")
    assert limiter.retry_after("d", "10.0.0.4") == 0


def test_removing_an_account_ends_its_session(server: Server, page: Page,
                                              shots: Path) -> None:
    page.goto("/login")
    screenshot(page, shots, "login")
    sign_in(page, "bob")
    page.goto("/queue")  # a page without the inbox's live script, which would redirect too
    expect(page.locator(".who .me")).to_have_text("bob")
    assert server.run(server.webapp.store.account_remove("bob"))
    page.goto("/signals")
    assert "/login" in page.url


def test_an_attachment_keeps_its_own_csp_and_pages_keep_theirs(server: Server,
                                                              page: Page) -> None:
    approval = server.run(park(server.queue, "Headers?", attachments=(
        NewAttachment("a.txt", b"plain bytes", "text/plain"),
        NewAttachment("dot.png", PNG, "image/png"))))
    sign_in(page)
    text, image = approval.attachments
    for path in (f"/attachments/{text.id}", f"/attachments/{image.id}/view"):
        answer = page.request.get(path)
        assert answer.status == 200, path
        assert answer.headers["content-security-policy"] == "default-src 'none'; sandbox"
        assert answer.headers["x-frame-options"] == "DENY"  # the others are still added
    inbox = page.request.get("/")
    assert inbox.headers["content-security-policy"].startswith("default-src 'self'")
    missing = page.request.get("/attachments/999999")
    assert missing.status == 404
    assert missing.headers["content-security-policy"].startswith("default-src 'self'")
