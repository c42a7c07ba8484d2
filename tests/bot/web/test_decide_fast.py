"""Deciding without scrolling (issue 41): each card's decision bar stays in the window while
the card is on screen, evidence at most at its natural size, field names whole at 390 px,
links only for http(s), Skip confirmed in the page, the keys, and dark mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from taskqueue import Decision, NewAttachment, Status
from tests.bot.web.conftest import Server, live, park, screenshot, sign_in
from tests.bot.web.evidence_files import form_screenshot, three_page_pdf

pytestmark = pytest.mark.slow  # a real Chromium

WIDTHS = ((1280, 800), (390, 844))
JOB = {"kind": "job_application", "role": "Engineer", "company": "Acme", "url":
       "https://jobs.example/1", "fields": [
           {"field": "Are you legally authorised to work in the country", "value": "Yes"},
           {"field": "Expected compensation (yearly, gross)", "value": "see https://pay.example/x"},
           {"field": "Portfolio", "value": "javascript:alert(1) and data:text/html,x"}]}


def _in_view(page: Page, where: Locator) -> bool:
    box = where.bounding_box()
    height = page.viewport_size["height"] if page.viewport_size else 0
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def _viewport_shot(page: Page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"))


def test_the_question_and_approve_are_in_view_with_a_screenshot_and_a_3_page_pdf(
        server: Server, page: Page, browser: Browser, shots: Path) -> None:
    png, pdf = form_screenshot(browser), three_page_pdf()
    approval = server.run(park(server.queue, "Send the application to Acme?", request=JOB,
                               attachments=(NewAttachment("form.png", png, "image/png"),
                                            NewAttachment("cv.pdf", pdf, "application/pdf"))))
    server.run(park(server.queue, "And the next one?"))
    sign_in(page)
    live(page)
    card = page.locator(f"#approval-{approval.id}")
    approve = card.locator("button[value=approve]")
    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("window.scrollTo(0, 0)")
        expect(card.locator("img.page")).to_have_count(3)
        assert _in_view(page, card.locator("h2")) and _in_view(page, approve), width
        _viewport_shot(page, shots, f"41-decide-top-{width}")
        last = card.locator("img.page").nth(2)  # deep in the evidence: the bar stays
        last.scroll_into_view_if_needed()
        assert _in_view(page, approve) and _in_view(page, card.locator(".decide .asked"))
        expect(card.locator(".decide .asked")).to_have_text("Send the application to Acme?")
        _viewport_shot(page, shots, f"41-decide-deep-{width}")
    page.set_viewport_size({"width": 1280, "height": 800})
    screenshot(page, shots, "41-inbox")
    approve.click()
    expect(card.locator(".decided")).to_contain_text("Approved by alice")


def test_images_are_never_scaled_up_and_fit_the_phone(server: Server, page: Page,
                                                      browser: Browser) -> None:
    png = form_screenshot(browser)  # 800 px wide
    approval = server.run(park(server.queue, "Look?", attachments=(
        NewAttachment("form.png", png, "image/png"),
        NewAttachment("cv.pdf", three_page_pdf(), "application/pdf"))))
    sign_in(page)
    images = page.locator(f"#approval-{approval.id} img")
    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height})
        for n in range(images.count()):
            img = images.nth(n)
            img.scroll_into_view_if_needed()
            page.wait_for_function("i => i.complete && i.naturalWidth > 0",
                                   arg=img.element_handle())
            natural, shown = img.evaluate("i => [i.naturalWidth, i.clientWidth]")
            assert shown <= natural + 0.5, (width, n, natural, shown)  # never upscaled
            assert shown <= width
    page.set_viewport_size({"width": 1280, "height": 800})
    shot = images.first
    assert shot.evaluate("i => i.clientWidth") == 800  # as it is, not stretched


def test_field_names_break_between_words_only_and_links_are_http_only(
        server: Server, page: Page, shots: Path) -> None:
    approval = server.run(park(server.queue, "Fields?", request=JOB))
    generic = server.run(park(server.queue, "Generic?", request={
        "kind": "other", "see": "docs at https://docs.example/a?b=1, and file:///etc/passwd",
        "a_rather_long_field_name_that_wraps": "x"}))
    sign_in(page)
    page.set_viewport_size({"width": 390, "height": 844})
    heads = page.locator(f"#approval-{approval.id} table.fields th")
    expect(heads).to_have_count(3)
    split = page.evaluate("""() => {
      const broken = [];
      for (const th of document.querySelectorAll("table.fields th")) {
        const text = th.firstChild;
        const re = /\\S+/g; let m;
        while ((m = re.exec(text.textContent))) {
          const r = document.createRange();
          r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
          if (r.getClientRects().length > 1) broken.push(m[0]);
        }
      }
      return broken;
    }""")
    assert split == []
    screenshot(page, shots, "41-fields")
    card = page.locator(f"#approval-{approval.id}")
    link = card.locator("a[href='https://pay.example/x']")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(card.locator("a[href^='javascript'], a[href^='data']")).to_have_count(0)
    expect(card).to_contain_text("javascript:alert(1)")
    other = page.locator(f"#approval-{generic.id}")
    expect(other.locator("a[href='https://docs.example/a?b=1']")).to_have_text(
        "https://docs.example/a?b=1")
    expect(other.locator("a[href^='file']")).to_have_count(0)


def test_skip_asks_in_the_page_and_keep_it_takes_it_back(server: Server, page: Page,
                                                         shots: Path) -> None:
    approval = server.run(park(server.queue, "Skip me?"))
    sign_in(page)
    live(page)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    card = page.locator(f"#approval-{approval.id}")
    confirm = card.get_by_role("button", name="Confirm skip")
    expect(confirm).to_be_hidden()
    card.locator("button.skip").click()
    expect(confirm).to_be_visible()
    expect(card.locator(".ask")).to_have_text("Skip ends this task for good.")
    screenshot(page, shots, "41-confirm-skip")
    card.get_by_role("button", name="Keep it").click()
    expect(confirm).to_be_hidden()
    assert server.run(server.queue.approval_get(approval.id)).is_open
    card.locator("button.skip").click()
    confirm.click()
    expect(card.locator(".decided")).to_contain_text("Skipped by alice")
    assert not dialogs
    assert server.run(server.queue.task_get(approval.task_id)).status is Status.SKIPPED


def test_keys_move_between_cards_and_decide_after_a_confirmation(
        server: Server, page: Page, shots: Path) -> None:
    first, second, third = (server.run(park(server.queue, f"Question {n}?")) for n in (1, 2, 3))
    sign_in(page)
    live(page)
    cards = [page.locator(f"#approval-{a.id}") for a in (first, second, third)]
    page.keyboard.press("j")
    expect(cards[0]).to_have_class("card current")
    page.keyboard.press("j")
    expect(cards[1]).to_have_class("card current")
    page.keyboard.press("k")
    expect(cards[0]).to_have_class("card current")
    page.keyboard.press("a")
    confirm = cards[0].get_by_role("button", name="Confirm approve")
    expect(confirm).to_be_focused()
    assert server.run(server.queue.approval_get(first.id)).is_open  # asked, not decided
    page.keyboard.press("Enter")
    expect(cards[0].locator(".decided")).to_contain_text("Approved by alice")
    page.keyboard.press("j")  # the next open card
    expect(cards[1]).to_have_class("card current")
    page.keyboard.press("s")
    expect(cards[1].get_by_role("button", name="Confirm skip")).to_be_focused()
    page.keyboard.press("Escape")
    expect(cards[1].get_by_role("button", name="Confirm skip")).to_be_hidden()
    page.keyboard.press("r")
    expect(cards[1].locator("textarea")).to_be_focused()
    page.keyboard.type("Shorter, please.")
    page.keyboard.press("Enter")
    expect(cards[1].get_by_role("button", name="Confirm revise")).to_be_focused()
    page.keyboard.press("Enter")
    expect(cards[1].locator(".decided")).to_contain_text("Revise requested by alice")
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_be_visible()
    expect(page.locator("#keys")).to_contain_text("approve")
    screenshot(page, shots, "41-keys")
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_be_hidden()
    cards[2].locator("textarea").focus()  # Tab and Enter alone still decide
    page.keyboard.press("Tab")
    expect(cards[2].locator("button[value=approve]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(cards[2].locator(".decided")).to_contain_text("Approved by alice")
    revised = server.run(server.queue.task_get(second.task_id))
    assert revised.decision is Decision.REVISED and revised.approval is not None
    assert revised.approval.note == "Shorter, please."


def test_dark_mode_follows_the_system(server: Server, page: Page, shots: Path) -> None:
    server.run(park(server.queue, "In the dark?"))
    sign_in(page)
    background = "() => getComputedStyle(document.documentElement).backgroundColor"
    page.emulate_media(color_scheme="light")
    light = page.evaluate(background)
    page.emulate_media(color_scheme="dark")
    dark = page.evaluate(background)

    def brightness(css: str) -> float:
        r, g, b = (int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
        return (r + g + b) / 765

    assert brightness(light) > 0.8 and brightness(dark) < 0.2, (light, dark)
    screenshot(page, shots, "41-dark")
    page.emulate_media(color_scheme="light")
