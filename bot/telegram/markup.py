"""Free-form HTML from a workload, cut down to what Telegram shows and nothing else.

Telegram's HTML mode accepts a few tags; everything else is shown as escaped text, and
links keep only http(s) addresses, so no text from the database reaches the chat raw."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from urllib.parse import urlsplit

ALLOWED = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre",
           "blockquote", "a"}


class _Sanitizer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED:
            return
        if tag == "a":
            href = dict(attrs).get("href") or ""
            if urlsplit(href).scheme not in ("http", "https"):
                return
            self.out.append(f'<a href="{html.escape(href, quote=True)}">')
        else:
            self.out.append(f"<{tag}>")
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open:
                last = self.open.pop()
                self.out.append(f"</{last}>")
                if last == tag:
                    break

    def handle_data(self, data: str) -> None:
        self.out.append(html.escape(data, quote=False))


def sanitize(text: str) -> str:
    """`text` with only Telegram's tags kept (balanced), everything else escaped."""
    parser = _Sanitizer()
    parser.feed(text)
    parser.close()
    return "".join(parser.out) + "".join(f"</{t}>" for t in reversed(parser.open))
