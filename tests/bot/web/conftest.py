"""Fixtures for the web inbox: the server (and optionally the Telegram bot against the fake
Bot API) on an event loop of its own thread, and one Chromium per test module."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aiohttp import web
from playwright.sync_api import Browser, Page, sync_playwright

from bot.web.app import WebApp
from bot.web.pages import install
from bot.web.passwords import hash_password
from taskqueue import Approval, NewAttachment, TaskQueue

T = TypeVar("T")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
PASSWORD = "correct horse battery"
# Hashed once: scrypt costs about 50 ms a time.
PASSWORD_HASH = hash_password(PASSWORD)


class Server:
    """The web inbox on 127.0.0.1 in a thread with its own event loop; `run(coro)` runs a
    coroutine there (the queue's pool lives on that loop)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.queue: TaskQueue = None  # type: ignore[assignment]
        self.webapp: WebApp = None  # type: ignore[assignment]
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._queue_cm: Any = None
        self.extras: list[Any] = []

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def start(self) -> None:
        self._queue_cm = TaskQueue.connect(self.dsn, min_size=1, max_size=10)
        self.queue = await self._queue_cm.__aenter__()
        self.webapp = WebApp(self.queue)
        await self.webapp.store.account_add("alice", PASSWORD_HASH)
        await self.webapp.store.account_add("bob", PASSWORD_HASH)
        app = web.Application()
        install(self.webapp, app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        for extra in reversed(self.extras):
            await extra()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._queue_cm is not None:
            await self._queue_cm.__aexit__(None, None, None)

    def close(self) -> None:
        try:
            self.run(self.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture
def server(dsn: str) -> Iterator[Server]:
    srv = Server(dsn)
    try:
        srv.run(srv.start())
        yield srv
    finally:
        srv.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module's tests."""
    with sync_playwright() as pw:
        shared = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield shared
        shared.close()


@pytest.fixture
def page(browser: Browser, server: Server) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  base_url=server.url)
    context.set_default_timeout(20_000)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where page screenshots go: $SIGNOFF_TEST_SCREENSHOTS, else this test's folder."""
    folder = Path(os.environ.get("SIGNOFF_TEST_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def screenshot(page: Page, folder: Path, name: str) -> None:
    """The page at desktop (1280) and phone (390) width, full length; at either width nothing
    sticks out sideways (the page never scrolls horizontally)."""
    for label, width in (("desktop", 1280), ("phone", 390)):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(folder / f"{name}-{label}.png"), full_page=True)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{name} is {wide}px wide at {label} width {width}px"
    page.set_viewport_size({"width": 1280, "height": 900})


def sign_in(page: Page, name: str = "alice", password: str = PASSWORD) -> None:
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login" not in url)


def live(page: Page) -> None:
    """Wait until the inbox's script runs (its stream is opened)."""
    page.wait_for_selector("body[data-live=ready]", state="attached")


async def park(queue: TaskQueue, question: str, *, request: dict[str, Any] | None = None,
               capability: str = "jobs", attachments: tuple[NewAttachment, ...] = ()
               ) -> Approval:
    await queue.task_enqueue(capability, {"n": 1})
    task = await queue.task_claim(capability, "w1")
    assert task is not None
    return await queue.task_park(task.id, "w1", question, claim=task.claim,
                                 request=request or {}, attachments=attachments)


def eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)
    return value
