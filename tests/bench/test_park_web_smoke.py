"""bench.park_web runs end to end with a real worker, `signoff web` and Chromium on two parks;
its page observer counts a card once however the list is redrawn; timings are reported,
never checked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from bench import park_web
from bench.park_web import OBSERVER, park_to_card
from bench.web_inbox import CHROMIUM, CHROMIUM_ARGS
from taskqueue import Status, TaskQueue

pytestmark = pytest.mark.slow  # a real Chromium

LATENCY = {"n", "p50_ms", "p95_ms", "p99_ms", "max_ms"}
CARD = ('<article class="card" id="approval-{a}" data-approval="{a}">'
        '<a href="/tasks/{t}">Task {t}</a></article>')


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page()
        tab.add_init_script(OBSERVER)
        tab.goto("data:text/html,<div id=cards></div>")
        yield tab
        browser.close()


def _cards(page: Page) -> dict[str, Any]:
    return page.evaluate("() => window.__parkWeb.cards")


async def test_each_park_is_timed_to_its_card_in_chromium(dsn: str) -> None:
    figure = await park_to_card(dsn, 2, bulk_ms=5, concurrency=4)

    assert figure["parks"] == 2 and isinstance(figure["met"], bool)
    for name in ("park_to_card", "park_to_dom", "transaction_to_card"):
        assert set(figure[name]) == LATENCY and figure[name]["n"] == 2
    cards = figure["cards"]
    assert figure["exactly_once"] is cards["exactly_once"] is True
    assert cards["parks"] == 2 + figure["warmup"] and not cards["missing"] + cards["not_once"]
    assert figure["bulk"]["tasks"] >= 0 and figure["worker"]["concurrency"] == 4
    assert figure["event_stream_connections"] >= 1 and "Date.now()" in figure["clock"]
    assert "1000 bulk tasks/s" in figure["goal"]
    async with TaskQueue.connect(dsn) as q:
        skipped = await q.task_list(status=Status.SKIPPED)
    assert len(skipped) == cards["parks"]
    json.dumps(figure)


def test_a_redrawn_card_keeps_its_first_time_and_a_copy_counts_twice(page: Page) -> None:
    page.evaluate("html => { document.getElementById('cards').innerHTML = html; }",
                  CARD.format(a=1, t=7))
    page.wait_for_function("() => window.__parkWeb.cards['7'].painted !== null")
    first = _cards(page)["7"]
    page.evaluate("html => { document.getElementById('cards').outerHTML = "
                  "'<div id=cards>' + html + '</div>'; }", CARD.format(a=1, t=7))
    page.evaluate("() => document.getElementById('approval-1').classList.add('closed')")
    redrawn = _cards(page)["7"]
    assert redrawn["at"] == first["at"] and redrawn["most"] == redrawn["shown"] == 1
    assert redrawn["closed"] is True

    page.evaluate("html => document.getElementById('cards').insertAdjacentHTML("
                  "'beforeend', html)", CARD.format(a=2, t=7))
    twice = _cards(page)["7"]
    assert twice["most"] == twice["shown"] == 2


def test_the_exit_code_is_1_when_a_card_did_not_show_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    async def fake(argv: list[str]) -> dict[str, Any]:
        return {"exactly_once": argv == ["once"]}

    monkeypatch.setattr(park_web, "benchmark", fake)
    assert park_web.main(["once"]) == 0
    assert park_web.main(["twice"]) == 1
    assert '"exactly_once": false' in capsys.readouterr().out
