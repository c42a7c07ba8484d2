"""Templates (found by page name: templates/<page>.html) and JSON beside them.

Jinja2 autoescapes everything; a request's strings are never marked safe. A view answers
JSON when the path ends in `.json` or the query says `?format=json`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aiohttp import web
from markupsafe import Markup, escape

from bot.people import person_shown as person
from bot.people import progress_shown as progress

if TYPE_CHECKING:
    from jinja2 import Environment


TEMPLATES = Path(__file__).parent / "templates"


def when(at: datetime | None) -> str:
    """A timestamp as people read it, in UTC."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "never"


def span(seconds: float) -> str:
    """A duration in words: 45 s, 12 min, 3 h 5 min, 2 d 4 h."""
    s = int(abs(seconds))
    if s < 90:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def ago(at: datetime | None) -> str:
    if at is None:
        return "never"
    return f"{span((datetime.now(UTC) - at).total_seconds())} ago"


def until(at: datetime | None) -> str:
    if at is None:
        return "never"
    left = (at - datetime.now(UTC)).total_seconds()
    return f"in {span(left)}" if left >= 0 else f"{span(left)} ago"


def safe_url(value: Any) -> str | None:
    """A link target only when it is plain http(s): never javascript: or data:."""
    if not isinstance(value, str) or len(value) > 2000:
        return None
    parts = urlsplit(value.strip())
    return value.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           sort_keys=True)


# An http(s) address inside a text, up to the first space, quote or angle bracket.
_URL = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)


def linked(value: Any) -> Markup:
    """A request's text, escaped, with each http(s) address a link (`rel="noopener
    noreferrer"`); other schemes (javascript:, data:, file:) stay text."""
    text = as_text(value)
    out, last = [], 0
    for found in _URL.finditer(text):
        url = found.group(0).rstrip(".,;:!?)")
        if not safe_url(url):
            continue
        start, end = found.start(), found.start() + len(url)
        out.append(escape(text[last:start]))
        out.append(Markup('<a href="{0}" rel="noopener noreferrer" target="_blank">{0}</a>')
                   .format(url))
        last = end
    out.append(escape(text[last:]))
    return Markup("").join(out)


@cache
def environment() -> Environment:
    """The pages' templates, loaded with Jinja2 when the first page is rendered: a service
    whose inbox nobody opens never loads Jinja2 (issue 26, goal 8)."""
    from jinja2 import ChainableUndefined, Environment, FileSystemLoader

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True, undefined=ChainableUndefined)
    from bot.web.history import words

    env.filters.update(when=when, ago=ago, until=until, person=person, safe_url=safe_url,
                       history=words,
                       as_text=as_text, progress=progress, linked=linked,
                       pretty=lambda v: json.dumps(v, indent=2, ensure_ascii=False,
                                                   sort_keys=True, default=str))
    return env


def wants_json(request: web.Request) -> bool:
    return request.match_info.get("ext") == ".json" or request.query.get("format") == "json"


def html(name: str, context: dict[str, Any], status: int = 200) -> web.Response:
    text = environment().get_template(f"{name}.html").render(**context)
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def fragment(name: str, context: dict[str, Any]) -> str:
    return environment().get_template(f"{name}.html").render(**context)


def as_json(doc: Any, status: int = 200) -> web.Response:
    return web.json_response(doc, status=status,
                             dumps=partial(json.dumps, default=str, ensure_ascii=False))
