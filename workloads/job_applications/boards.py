"""Job boards: fetch Greenhouse and Lever postings concurrently and normalize them to `Posting`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote

import aiohttp

from workloads.job_applications.htmltext import escaped_html_to_text, html_to_text

__all__ = [
    "BoardConfig",
    "BoardFailure",
    "BoardFormatError",
    "FetchReport",
    "Posting",
    "fetch_all",
    "fetch_board",
    "parse_greenhouse",
    "parse_lever",
]

BoardKind = Literal["greenhouse", "lever"]

DEFAULT_BASE_URLS: Mapping[str, str] = {
    "greenhouse": "https://boards-api.greenhouse.io",
    "lever": "https://api.lever.co",
}
DEFAULT_TIMEOUT = 30.0  # seconds per board, connect to last byte


class BoardFormatError(ValueError):
    """The board answered, but not with the JSON shape its API documents."""


@dataclass(frozen=True)
class BoardConfig:
    kind: BoardKind
    token: str  # Greenhouse board token or Lever company slug
    company: str = ""  # display name; wins over the API's company_name
    base_url: str = ""  # empty: the public API

    def __post_init__(self) -> None:
        if self.kind not in DEFAULT_BASE_URLS:
            raise ValueError(f"unknown board kind {self.kind!r} (greenhouse or lever)")

    @property
    def name(self) -> str:
        """How errors and dedupe keys refer to this board, e.g. `lever:fjord`."""
        return f"{self.kind}:{self.token}"

    @property
    def url(self) -> str:
        base = (self.base_url or DEFAULT_BASE_URLS[self.kind]).rstrip("/")
        if self.kind == "greenhouse":
            return f"{base}/v1/boards/{self.token}/jobs?content=true"
        return f"{base}/v0/postings/{self.token}?mode=json"

    def job_url(self, external_id: str) -> str:
        """One posting (with Greenhouse's pay ranges): a 404 means it was taken down."""
        base = (self.base_url or DEFAULT_BASE_URLS[self.kind]).rstrip("/")
        job = quote(external_id, safe="")
        if self.kind == "greenhouse":
            return f"{base}/v1/boards/{self.token}/jobs/{job}?pay_transparency=true"
        return f"{base}/v0/postings/{self.token}/{job}?mode=json"


@dataclass(frozen=True)
class Posting:
    source: BoardKind
    board: str  # the board token / company slug it came from
    external_id: str
    company: str
    title: str
    location: str
    remote: bool
    url: str  # the posting page
    apply_url: str  # the application form
    text: str  # plain-text description
    team: str = ""
    updated_at: str = ""  # ISO 8601 when the board says
    # The stated yearly pay range in whole units of pay_currency; None when not stated.
    pay_min: int | None = None
    pay_max: int | None = None
    pay_currency: str = ""


@dataclass(frozen=True)
class BoardFailure:
    board: str
    error: str


@dataclass(frozen=True)
class FetchReport:
    postings: tuple[Posting, ...]
    errors: tuple[BoardFailure, ...]


async def fetch_all(
    boards: Iterable[BoardConfig], *, timeout: float = DEFAULT_TIMEOUT
) -> FetchReport:
    """Fetch every board at once; a failing board becomes a BoardFailure, the rest still count."""
    boards = list(boards)
    client_timeout = aiohttp.ClientTimeout(total=timeout)
    async with aiohttp.ClientSession(timeout=client_timeout) as session:
        results = await asyncio.gather(*(_fetch_or_fail(session, b) for b in boards))
    postings = [p for result in results if isinstance(result, list) for p in result]
    errors = [result for result in results if isinstance(result, BoardFailure)]
    return FetchReport(tuple(postings), tuple(errors))


async def _fetch_or_fail(
    session: aiohttp.ClientSession, board: BoardConfig
) -> list[Posting] | BoardFailure:
    try:
        return await fetch_board(session, board)
    except TimeoutError:
        return BoardFailure(board.name, "timed out")
    except (aiohttp.ClientError, ValueError) as exc:
        return BoardFailure(board.name, f"{type(exc).__name__}: {exc}")


async def fetch_board(session: aiohttp.ClientSession, board: BoardConfig) -> list[Posting]:
    """One board's postings; raises aiohttp.ClientError, TimeoutError or ValueError."""
    async with session.get(board.url, headers={"Accept": "application/json"}) as response:
        if response.status >= 400:
            raise aiohttp.ClientResponseError(
                response.request_info, (), status=response.status, message=response.reason or ""
            )
        data = await response.json(content_type=None)  # JSONDecodeError is a ValueError
    if board.kind == "greenhouse":
        return parse_greenhouse(data, board)
    return parse_lever(data, board)


def parse_greenhouse(data: object, board: BoardConfig) -> list[Posting]:
    """Postings from a Greenhouse `GET /v1/boards/{token}/jobs?content=true` body."""
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise BoardFormatError("expected an object with a `jobs` array")
    return [
        _greenhouse_posting(_object(job, f"jobs[{i}]"), board) for i, job in enumerate(data["jobs"])
    ]


def _greenhouse_posting(job: Mapping[str, object], board: BoardConfig) -> Posting:
    location = _text(_object(job.get("location") or {}, "location").get("name"))
    offices = [_text(_object(o, "office").get("name")) for o in _list(job.get("offices"))]
    url = _required(job, "absolute_url")
    return Posting(
        source="greenhouse",
        board=board.token,
        external_id=_required(job, "id"),
        company=board.company or _text(job.get("company_name")) or board.token,
        title=_required(job, "title"),
        location=location,
        remote=_mentions_remote(location, *offices),
        url=url,
        apply_url=url,  # Greenhouse hosts the form on the posting page (#app)
        text=escaped_html_to_text(_text(job.get("content"))),
        team=", ".join(
            _text(_object(d, "department").get("name")) for d in _list(job.get("departments"))
        ),
        updated_at=_text(job.get("updated_at")),
        **_greenhouse_pay(job.get("pay_input_ranges")),
    )


def _greenhouse_pay(ranges: object) -> dict[str, Any]:
    """The widest range of the first currency in `pay_input_ranges` (cents → whole units)."""
    found = [r for r in _list(ranges) if isinstance(r, dict)
             and isinstance(r.get("min_cents"), int) and isinstance(r.get("max_cents"), int)]
    if not found:
        return {}
    currency = _text(found[0].get("currency_type")).upper()
    same = [r for r in found if _text(r.get("currency_type")).upper() == currency]
    return {"pay_min": min(r["min_cents"] for r in same) // 100,
            "pay_max": max(r["max_cents"] for r in same) // 100, "pay_currency": currency}


def parse_lever(data: object, board: BoardConfig) -> list[Posting]:
    """Postings from a Lever `GET /v0/postings/{company}?mode=json` body (a JSON array)."""
    if not isinstance(data, list):
        raise BoardFormatError("expected a JSON array of postings")
    return [_lever_posting(_object(item, f"[{i}]"), board) for i, item in enumerate(data)]


def _lever_posting(item: Mapping[str, object], board: BoardConfig) -> Posting:
    categories = _object(item.get("categories") or {}, "categories")
    location = _text(categories.get("location"))
    url = _required(item, "hostedUrl")
    return Posting(
        source="lever",
        board=board.token,
        external_id=_required(item, "id"),
        company=board.company or board.token,
        title=_required(item, "text"),
        location=location,
        remote=item.get("workplaceType") == "remote" or _mentions_remote(location),
        url=url,
        apply_url=_text(item.get("applyUrl")) or f"{url.rstrip('/')}/apply",
        text=_lever_text(item),
        team=_text(categories.get("team")),
        updated_at=_from_millis(item.get("createdAt")),
        **_lever_pay(item.get("salaryRange")),
    )


def _lever_pay(salary: object) -> dict[str, Any]:
    """Lever's `salaryRange`, when yearly (other intervals are not compared)."""
    if not isinstance(salary, dict) or salary.get("interval") not in ("per-year-salary", None):
        return {}
    low, high = salary.get("min"), salary.get("max")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return {}
    return {"pay_min": int(low), "pay_max": int(high),
            "pay_currency": _text(salary.get("currency")).upper()}


def _lever_text(item: Mapping[str, object]) -> str:
    parts = [_text(item.get("descriptionPlain")) or html_to_text(_text(item.get("description")))]
    for entry in _list(item.get("lists")):
        section = _object(entry, "lists[]")
        parts.append(f"{_text(section.get('text'))}\n{html_to_text(_text(section.get('content')))}")
    parts.append(_text(item.get("additionalPlain")))
    return "\n\n".join(part.strip() for part in parts if part.strip())


def _mentions_remote(*places: str) -> bool:
    return any("remote" in place.lower() for place in places)


def _from_millis(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=UTC).isoformat()
    return ""


def _object(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise BoardFormatError(f"{where}: expected an object")
    return value


def _list(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _required(job: Mapping[str, object], key: str) -> str:
    value = job.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise BoardFormatError(f"posting {job.get('id')!r}: missing `{key}`")
    return str(value).strip()
