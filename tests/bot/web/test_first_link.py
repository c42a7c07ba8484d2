"""The one-time sign-in link a real `python -m bot` prints while no account exists, opened in
Chromium: it creates the first account and signs it in (the inbox shows), then it is
refused; a link past its expiry (moved in the database) is refused too. The token is printed
once and logged nowhere else."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import Browser, BrowserContext

from bot.web.firstlink import first_link_issue, token_hash
from bot.web.store import AccountStore
from taskqueue import TaskQueue
from tests.bot.web.conftest import live, screenshot
from tests.timing import WAIT

_LINK = re.compile(r"inbox: (http://127\.0\.0\.1:\d+)/welcome\?token=([A-Za-z0-9_-]+) ")
PASSWORD = "a long first password"


class Service:
    """`python -m bot` with no config against `dsn`, its output in a file."""

    def __init__(self, dsn: str, folder: Path) -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TELEGRAM_", "SIGNOFF_"))}
        self.log = folder / "service.log"
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot"], cwd=folder,
                                         env=env | {"DATABASE_URL": dsn, "PYTHONUNBUFFERED": "1"},
                                         stdout=out, stderr=subprocess.STDOUT)

    def link(self) -> tuple[str, str]:
        """The printed link's (base URL, token), once the service has said it."""
        deadline = time.monotonic() + WAIT
        while not (found := _LINK.search(text := self.log.read_text(errors="replace"))):
            assert self.proc.poll() is None, f"the service exited:\n{text}"
            assert time.monotonic() < deadline, f"no link within {WAIT}s:\n{text}"
            time.sleep(0.2)
        return found[1], found[2]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no stop within {WAIT}s:\n{self.log.read_text()}") from None


@pytest.fixture
def service(dsn: str, tmp_path: Path) -> Iterator[Service]:
    running = Service(dsn, tmp_path)
    try:
        yield running
    finally:
        running.stop()


def _context(browser: Browser, base: str) -> BrowserContext:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=base)
    context.set_default_timeout(20_000)
    return context


def _sql(dsn: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(sql, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


async def _another_link(dsn: str) -> str:
    async with TaskQueue.connect(dsn, max_size=1) as queue:
        return await first_link_issue(AccountStore(queue.pool))


def test_the_link_works_once_then_is_refused_and_a_link_expires(
        dsn: str, service: Service, browser: Browser, shots: Path) -> None:
    base, token = service.link()
    context = _context(browser, base)
    page = context.new_page()

    # Expiry, while no account exists (so nothing else refuses it): a second link works
    # until its stored expiry is moved into the past.
    with ThreadPoolExecutor(1) as thread:  # Playwright's loop runs in this one
        other = thread.submit(asyncio.run, _another_link(dsn)).result(WAIT)
    shown = page.goto(f"/welcome?token={other}")
    assert shown is not None and shown.status == 200
    assert page.locator("h1").inner_text() == "Create your account"
    _sql(dsn, "UPDATE web_first_links SET expires_at = now() - interval '1 second' "
              "WHERE token_hash = %s", token_hash(other))
    refused = page.goto(f"/welcome?token={other}")
    assert refused is not None and refused.status == 403
    assert "does not work" in page.locator(".error").inner_text()
    assert page.locator("form[action='/welcome']").count() == 0
    screenshot(page, shots, "welcome-refused")

    # The printed link: the form, a mistake (the link stays usable), then the account.
    shown = page.goto(f"/welcome?token={token}")
    assert shown is not None and shown.status == 200
    screenshot(page, shots, "welcome")
    page.fill("input[name=name]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=again]", PASSWORD + "!")
    with page.expect_response(lambda r: r.url.endswith("/welcome")) as answer:
        page.click("button[type=submit]")
    assert answer.value.status == 400
    assert "the two passwords differ" in page.locator(".error").inner_text()
    assert page.input_value("input[name=name]") == "ada"
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=again]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")
    assert page.locator("h1").inner_text().startswith("Inbox")
    assert page.locator("form.who .me").inner_text() == "ada"
    screenshot(page, shots, "welcome-then-inbox")

    # Used: refused, signed in or not, and it made nothing more.
    for again in (page, _context(browser, base).new_page()):
        refused = again.goto(f"/welcome?token={token}")
        assert refused is not None and refused.status == 403
        assert again.locator("form[action='/welcome']").count() == 0
    assert _sql(dsn, "SELECT name FROM web_accounts") == [("ada",)]
    assert _sql(dsn, "SELECT used_by FROM web_first_links WHERE token_hash = %s "
                     "AND used_at IS NOT NULL", token_hash(token)) == [("ada",)]
    # The account signs in with its password, as any other.
    fresh = _context(browser, base).new_page()
    fresh.goto("/login")
    fresh.fill("input[name=name]", "ada")
    fresh.fill("input[name=password]", PASSWORD)
    fresh.click("button[type=submit]")
    fresh.wait_for_url(f"{base}/")
    live(fresh)
    context.close()

    # Stopped with an inbox open: its live stream ends, and the page's reconnect (1 s later,
    # maybe on a kept-alive connection) ends at once too, so the stop does not hang.
    assert service.stop() == 0
    text = service.log.read_text()
    assert text.count(token) == 1 and other not in text
    assert "web: first account ada created with the one-time link" in text
