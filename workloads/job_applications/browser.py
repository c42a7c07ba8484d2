"""The one place Chromium is launched: Debian's build, headless, driven by Playwright."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Browser, Page, ViewportSize, async_playwright

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "launch_browser", "open_page"]

# `playwright install` cannot download browsers on our machines; Debian's chromium works.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--no-sandbox",  # we run as root in a container; Chromium's sandbox refuses that
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}


@asynccontextmanager
async def launch_browser(executable_path: str = CHROMIUM) -> AsyncIterator[Browser]:
    """A headless Chromium for the duration of the block."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=executable_path, args=list(CHROMIUM_ARGS), headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def open_page(browser: Browser | None = None) -> AsyncIterator[Page]:
    """A page in a fresh context (no cookies shared), on `browser` or on a browser of its own."""
    if browser is None:
        async with launch_browser() as own, open_page(own) as page:
            yield page
        return
    context = await browser.new_context(viewport=VIEWPORT)
    try:
        yield await context.new_page()
    finally:
        await context.close()
