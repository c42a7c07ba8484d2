"""HTML to plain text for job descriptions: entities unescaped, tags dropped, blocks on lines."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

_BLOCK_TAGS = {
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "blockquote",
    "pre",
    "hr",
}
_SKIPPED_TAGS = {"script", "style", "template", "noscript"}


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n- " if tag == "li" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """Plain text of an HTML fragment: one line per block, spaces collapsed, entities decoded."""
    collector = _TextCollector()
    collector.feed(markup)
    collector.close()
    lines = (
        re.sub(r"[ \t\r\f\v\u00a0]+", " ", line).strip()
        for line in "".join(collector.parts).split("\n")
    )
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def escaped_html_to_text(escaped: str) -> str:
    """Plain text of entity-escaped HTML (`&lt;p&gt;…`), as Greenhouse's `content` field is."""
    return html_to_text(html.unescape(escaped))
