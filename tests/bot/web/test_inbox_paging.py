"""The inbox's pages over plain HTTP (no browser): the HTML page, read in SQL a page at a
time, shows the same cards, position, total and next link as the JSON's page, cut from the
whole list by page_of, after every approval there is: through ties on created_at, after
one decided meanwhile, on the last page and past it."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp

from bot.web.pages.inbox import page_of
from taskqueue import Decision, TaskQueue
from tests.bot.web.conftest import PASSWORD, Server, park

_CSRF = re.compile(r'name="csrf_token" value="([^"]*)"')
_CARD = re.compile(r'<article class="card"[^>]* data-approval="(\d+)"')
_COUNT = re.compile(r'id="open-count">(\d+)<')
_RANGE = re.compile(r'id="shown-range">Showing (\d+)–(\d+) of (\d+)')
_NEXT = re.compile(r'id="next-page" href="/\?after=(\d+)"')


async def _signed_in(http: aiohttp.ClientSession, url: str) -> None:
    async with http.get(f"{url}/login") as form:
        found = _CSRF.search(await form.text())
    assert found is not None
    async with http.post(f"{url}/login", allow_redirects=False, data={
            "name": "alice", "password": PASSWORD, "next": "/",
            "csrf_token": html.unescape(found.group(1))}) as answer:
        assert answer.status == 303


def _seen(text: str) -> dict[str, Any]:
    """What the HTML page shows: its cards, the count, the range and the next page."""
    count, shown, after = _COUNT.search(text), _RANGE.search(text), _NEXT.search(text)
    assert count is not None
    return {"cards": [int(i) for i in _CARD.findall(text)], "total": int(count.group(1)),
            "range": tuple(int(n) for n in shown.groups()) if shown else None,
            "next": int(after.group(1)) if after else None}


def _expected(doc: dict[str, Any], after: int | None) -> dict[str, Any]:
    """What the HTML page should show, from the JSON's whole list (the old page's rule)."""
    open_ = doc["open_ids"]
    shown, start = page_of(open_, after)
    last = start + len(shown) if shown else start + 1
    return {"cards": shown, "total": len(open_),
            "range": (start + 1, last, len(open_)) if len(open_) > len(shown) else None,
            "next": shown[-1] if start + len(shown) < len(open_) else None}


async def _inbox(server: Server) -> list[int]:
    """Thirty questions in the inbox's order, not their ids': ties, one dated first, one
    decided, one whose task was cancelled. All of them, in the order asked."""
    queue: TaskQueue = server.queue
    asked = [(await park(queue, f"Question {n}?")).id for n in range(30)]
    day = datetime(2026, 12, 1, tzinfo=UTC)
    async with queue.pool.connection() as conn:
        await conn.execute("UPDATE approvals SET created_at = %s WHERE id = ANY(%s)",
                           (day, asked[:29]))
        await conn.execute("UPDATE approvals SET created_at = %s WHERE id = ANY(%s)",
                           (day + timedelta(seconds=1), asked[4:12]))
        await conn.execute("UPDATE approvals SET created_at = %s WHERE id = %s",
                           (day - timedelta(seconds=1), asked[26]))
    await queue.approval_decide(asked[24], Decision.APPROVED, "bob")
    await queue.task_cancel((await queue.approval_get(asked[7])).task_id)
    return asked


async def _pages_agree(server: Server) -> int:
    asked = await _inbox(server)
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        await _signed_in(http, server.url)
        checked = 0
        for after in (None, 0, *asked, 10**12):
            query = "" if after is None else f"?after={after}"
            async with http.get(f"{server.url}/{query}") as page:
                seen = _seen(await page.text())
            async with http.get(f"{server.url}/inbox.json{query}") as answer:
                doc = await answer.json()
            assert seen == _expected(doc, after), after
            assert [a["id"] for a in doc["approvals"]] == seen["cards"], after
            checked += 1
        return checked


def test_the_html_pages_show_what_the_whole_lists_page_shows(server: Server) -> None:
    assert server.run(_pages_agree(server), timeout=120) == 33
