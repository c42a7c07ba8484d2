"""Attachments: downloaded with their content type and `Content-Disposition: attachment`;
inline only for raster images and the PDF pages rendered here."""

from __future__ import annotations

import re
from urllib.parse import quote

from aiohttp import web

from bot.web.app import web_app
from bot.web.evidence import INLINE_IMAGES, safe_content_type
from bot.web.pages.base import int_arg
from taskqueue import Attachment, NotFound

# An attachment's bytes run no script, even if a browser were to try.
FILE_CSP = "default-src 'none'; sandbox"


def disposition(kind: str, filename: str) -> str:
    """`attachment; filename="…"; filename*=UTF-8''…` with a plain-ASCII fallback."""
    fallback = re.sub(r"[^A-Za-z0-9._-]", "_", filename)[:150] or "attachment"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


async def _load(request: web.Request) -> Attachment:
    try:
        return await web_app(request).queue.attachment_get(int_arg(request, "id"))
    except NotFound:
        raise web.HTTPNotFound(text="no such attachment") from None


def _bytes(data: bytes, content_type: str, disposition_: str) -> web.Response:
    return web.Response(body=data, headers={
        "Content-Type": content_type, "Content-Disposition": disposition_,
        "Cache-Control": "private, max-age=300", "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": FILE_CSP})


async def download(request: web.Request) -> web.Response:
    item = await _load(request)
    return _bytes(item.data or b"", safe_content_type(item.content_type),
                  disposition("attachment", item.filename))


async def view(request: web.Request) -> web.Response:
    """An image shown in the page; anything else is downloaded instead."""
    item = await _load(request)
    ctype = safe_content_type(item.content_type)
    if ctype not in INLINE_IMAGES:
        raise web.HTTPSeeOther(f"/attachments/{item.id}")
    return _bytes(item.data or b"", ctype, disposition("inline", item.filename))


async def pdf_page(request: web.Request) -> web.Response:
    """Page N (from 1) of a PDF attachment, rendered here as a PNG."""
    item = await _load(request)
    if safe_content_type(item.content_type) != "application/pdf":
        raise web.HTTPNotFound(text="not a PDF")
    png = await web_app(request).pdfs.page_png(item, int_arg(request, "n") - 1)
    if png is None:
        raise web.HTTPNotFound(text="no such page")
    return _bytes(png, "image/png", disposition("inline", f"{item.filename}-page.png"))


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get(r"/attachments/{id:\d+}", download)
    router.add_get(r"/attachments/{id:\d+}/view", view)
    router.add_get(r"/attachments/{id:\d+}/pages/{n:\d+}.png", pdf_page)
