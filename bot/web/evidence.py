"""Evidence as a page shows it: which attachments are pictures, PDFs (rendered to page
images here, with pypdfium2), patches (coloured with Pygments) or text, and a request's
before → after rows. Nothing here trusts a stored content type to be harmless.

pypdfium2 (PDFium's library) and Pygments are imported by the functions that use them,
when a page first shows a PDF or a patch: a service whose inbox nobody opens never loads
them (issue 26, goal 8)."""

from __future__ import annotations

import asyncio
import json
import re
import struct
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from taskqueue import Attachment

# Served inline: raster images only (an SVG may carry script).
INLINE_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PATCH_TYPES = frozenset({"text/x-diff", "text/x-patch", "text/diff"})
# Shown in the page up to these sizes; past them, only the download link.
MAX_SHOWN_TEXT = 64 * 1024
MAX_SHOWN_PATCH = 512 * 1024
MAX_PDF_PAGES = 20
# PDF pages are rendered this wide (pixels) and kept in memory, at most CACHE_PAGES.
PAGE_WIDTH = 1100
CACHE_PAGES = 64
_CONTENT_TYPE = re.compile(r"^[a-z0-9][a-z0-9.+-]*/[a-z0-9][a-z0-9.+-]*$")


def safe_content_type(value: str) -> str:
    """The stored type when it is a plain `type/subtype`, else application/octet-stream."""
    value = (value or "").split(";")[0].strip().lower()
    return value if _CONTENT_TYPE.match(value) else "application/octet-stream"


def kind_of(item: Attachment) -> str:
    """image, pdf, patch, text or file: how the page shows it."""
    ctype = safe_content_type(item.content_type)
    name = item.filename.lower()
    if ctype in INLINE_IMAGES:
        return "image"
    if ctype == "application/pdf":
        return "pdf"
    if ctype in PATCH_TYPES or name.endswith((".patch", ".diff")):
        return "patch" if item.size_bytes <= MAX_SHOWN_PATCH else "file"
    if ctype.startswith("text/") and ctype != "text/html" and item.size_bytes <= MAX_SHOWN_TEXT:
        return "text"
    return "file"


def diff_html(text: str) -> Markup:
    """A patch coloured by Pygments (classes only: the page's CSP allows no inline style)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import DiffLexer

    return Markup(highlight(text, DiffLexer(), HtmlFormatter(cssclass="highlight")))


def pygments_css() -> str:
    from pygments.formatters import HtmlFormatter

    return str(HtmlFormatter(style="default").get_style_defs(".highlight"))


def decoded(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


@dataclass(frozen=True)
class Row:
    """One line of a before → after table."""

    key: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           sort_keys=True)


def before_after(request: dict[str, Any]) -> list[Row]:
    """A VM change's `before` and `after` objects as rows, changed ones marked."""
    before, after = request.get("before"), request.get("after")
    if not isinstance(before, dict) and not isinstance(after, dict):
        return []
    b = before if isinstance(before, dict) else {}
    a = after if isinstance(after, dict) else {}
    keys = list(dict.fromkeys([*b, *a]))
    return [Row(str(k), _shown(b.get(k)), _shown(a.get(k))) for k in keys]


class PdfPages:
    """Page counts and page images of PDF attachments, rendered once and kept (LRU)."""

    def __init__(self, capacity: int = CACHE_PAGES) -> None:
        self.capacity = capacity
        self._pages: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self._counts: dict[str, int] = {}
        self._lock = asyncio.Lock()

    def known_count(self, sha256: str) -> int | None:
        """The page count of a PDF seen before (by its checksum), without its bytes."""
        return self._counts.get(sha256)

    async def count(self, item: Attachment) -> int:
        """How many pages the PDF has (0 when it cannot be read)."""
        if item.sha256 not in self._counts:
            self._counts[item.sha256] = await asyncio.to_thread(_page_count, item.data or b"")
        return self._counts[item.sha256]

    async def page_png(self, item: Attachment, index: int) -> bytes | None:
        """Page `index` (from 0) as a PNG; None past the end or when it cannot be read."""
        key = (item.sha256, index)
        if key in self._pages:
            self._pages.move_to_end(key)
            return self._pages[key]
        async with self._lock:  # PDFium is not thread-safe: one render at a time
            png = await asyncio.to_thread(_render, item.data or b"", index)
        if png is not None:
            self._pages[key] = png
            while len(self._pages) > self.capacity:
                self._pages.popitem(last=False)
        return png


class Shown:
    """Text and coloured patches as shown, by checksum (LRU): the inbox is read again on
    every live update, and its evidence rarely changes."""

    def __init__(self, capacity: int = CACHE_PAGES) -> None:
        self.capacity = capacity
        self._items: OrderedDict[tuple[str, str], str | Markup] = OrderedDict()

    def get(self, kind: str, sha256: str) -> str | Markup | None:
        found = self._items.get((kind, sha256))
        if found is not None:
            self._items.move_to_end((kind, sha256))
        return found

    def put(self, kind: str, sha256: str, value: str | Markup) -> None:
        self._items[(kind, sha256)] = value
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)


def _page_count(data: bytes) -> int:
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError:
        return 0
    try:
        return min(len(pdf), MAX_PDF_PAGES)
    finally:
        pdf.close()


def _render(data: bytes, index: int) -> bytes | None:
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError:
        return None
    try:
        if not 0 <= index < min(len(pdf), MAX_PDF_PAGES):
            return None
        page = pdf[index]
        width = page.get_width() or 1
        bitmap = page.render(scale=PAGE_WIDTH / width, rev_byteorder=True)
        try:
            return _png(bitmap)
        finally:
            bitmap.close()
            page.close()
    finally:
        pdf.close()


def _png(bitmap: Any) -> bytes:
    """A rendered page (RGB or RGBx/RGBA rows) as a PNG: zlib-compressed scanlines."""
    width, height, stride = bitmap.width, bitmap.height, bitmap.stride
    channels = stride // width if width else 3
    raw = bytes(bitmap.buffer)
    rows = bytearray()
    for y in range(height):
        line = raw[y * stride: y * stride + width * channels]
        if channels == 4:  # drop the padding byte: RGBx → RGB
            line = b"".join(line[i:i + 3] for i in range(0, len(line), 4))
        rows += b"\x00" + line
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + _chunk(b"IEND", b""))


def _chunk(tag: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
