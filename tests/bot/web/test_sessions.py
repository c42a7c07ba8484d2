"""Sessions kept on the server (defect 2 of issue 41): sign out ends the session so a copy of
its cookie is refused, "sign out everywhere" ends every browser's, an scrypt hash becomes
argon2id at its next sign-in, and a page left open across a sign-out says so in words
(defect 5) and decides nothing."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from taskqueue import Status
from tests.bot.web.conftest import PASSWORD, Server, live, park, screenshot, sign_in

pytestmark = pytest.mark.slow  # a real Chromium


def _cookie(page: Page) -> str:
    [cookie] = [c for c in page.context.cookies() if c["name"] == "signoff_session"]
    return cookie["value"]


def _with_cookie(page: Page, value: str, path: str = "/inbox.json") -> int:
    """The status of a GET that carries only `value` as the session cookie (a copy)."""
    return page.request.get(path, headers={"Cookie": f"signoff_session={value}"},
                            max_redirects=0).status


def test_sign_out_ends_the_session_and_a_copied_cookie_is_refused(
        server: Server, page: Page, browser: Browser) -> None:
    sign_in(page)
    copied = _cookie(page)
    assert _with_cookie(page, copied) == 200  # the copy works while the session stands
    page.click(".who button")  # Sign out
    page.wait_for_url("**/login")
    assert not [c for c in page.context.cookies() if c["name"] == "signoff_session"]
    other = browser.new_context(base_url=server.url)
    try:
        assert _with_cookie(other.new_page(), copied) == 401
    finally:
        other.close()
    assert server.run(server.webapp.store.session_count("alice")) == 0
    sign_in(page)  # signing in again still works, with a new cookie
    assert _cookie(page) != copied and _with_cookie(page, _cookie(page)) == 200


def test_a_cookie_the_server_never_issued_is_refused(server: Server, page: Page) -> None:
    sign_in(page)
    assert _with_cookie(page, _cookie(page)[:-2] + "xx") == 401
    assert _with_cookie(page, "x" * 500) == 401


def test_sign_out_everywhere_ends_every_browser_of_that_person_only(
        server: Server, page: Page, browser: Browser, shots: Path) -> None:
    sign_in(page)
    contexts = [browser.new_context(base_url=server.url) for _ in range(2)]
    try:
        laptop, bobs = (c.new_page() for c in contexts)
        sign_in(laptop)
        sign_in(bobs, "bob")
        page.goto("/account")
        expect(page.locator("#session-count")).to_contain_text("2 sessions are open")
        screenshot(page, shots, "41-account")
        page.click("text=Sign out everywhere")
        page.wait_for_url("**/login")
        assert _with_cookie(laptop, _cookie(laptop)) == 401
        laptop.goto("/")
        assert "/login" in laptop.url
        assert _with_cookie(bobs, _cookie(bobs)) == 200  # another person's session stands
    finally:
        for c in contexts:
            c.close()


def _scrypt(password: str) -> str:
    """A hash as the web stored them before argon2id."""
    salt = b"0123456789abcdef"
    key = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32,
                         maxmem=64 * 1024 * 1024)
    b64 = base64.b64encode
    return f"scrypt${2**14}$8$1${b64(salt).decode()}${b64(key).decode()}"


def test_an_scrypt_hash_signs_in_once_and_is_argon2id_after(server: Server,
                                                            page: Page) -> None:
    store = server.webapp.store
    assert server.run(store.account_add("carol", _scrypt(PASSWORD)))
    page.goto("/login")
    page.fill("input[name=name]", "carol")
    page.fill("input[name=password]", "not the password")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_have_text("Wrong name or password.")
    assert server.run(store.account_get("carol")).password_hash.startswith("scrypt$")
    sign_in(page, "carol")
    stored = server.run(store.account_get("carol")).password_hash
    assert stored.startswith("$argon2id$")
    assert server.run(store.session_count("carol")) == 1  # the upgrade ends no session
    page.click(".who button")
    sign_in(page, "carol")  # the argon2id hash verifies too
    expect(page.locator(".who .me")).to_have_text("carol")


def test_a_page_left_open_across_a_sign_out_says_so_and_decides_nothing(
        server: Server, page: Page, shots: Path) -> None:
    approval = server.run(park(server.queue, "Left open?"))
    sign_in(page)
    live(page)
    other = page.context.new_page()  # the same browser: sign out, then in again
    other.goto("/account")
    other.click(".who button")
    sign_in(other)
    card = page.locator(f"#approval-{approval.id}")
    card.locator("button[value=approve]").click()
    expect(card.locator(".error")).to_contain_text("you were signed out: reload")
    expect(card.locator(".error")).not_to_contain_text("JSON")
    screenshot(page, shots, "41-signed-out")
    assert server.run(server.queue.approval_get(approval.id)).is_open
    other.close()
    page.reload()  # the reloaded page decides as before
    live(page)
    card.locator("button[value=approve]").click()
    expect(card.locator(".decided")).to_contain_text("Approved by alice")
    assert server.run(server.queue.task_get(approval.task_id)).status is Status.APPROVED


def test_a_page_whose_session_ended_entirely_says_so_too(server: Server, page: Page) -> None:
    approval = server.run(park(server.queue, "Signed out?"))
    sign_in(page)
    live(page)
    server.run(server.webapp.sign_out_everywhere("alice"))
    card = page.locator(f"#approval-{approval.id}")
    card.locator("button[value=approve]").click()
    expect(card.locator(".error")).to_contain_text("you were signed out: reload")
    assert server.run(server.queue.approval_get(approval.id)).is_open
