"""One posting at a time from the board APIs: is it still live, and what pay does it state.

`GET /v1/boards/{token}/jobs/{id}?pay_transparency=true` (Greenhouse) and
`GET /v0/postings/{company}/{id}?mode=json` (Lever) answer 404 once a posting is taken down,
and Greenhouse states pay ranges (`pay_input_ranges`) only in this one-job view.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import aiohttp

from workloads.job_applications.boards import (
    DEFAULT_TIMEOUT,
    BoardConfig,
    Posting,
    parse_greenhouse,
    parse_lever,
)

__all__ = ["GONE_STATUSES", "JobCheck", "board_for", "check_posting", "with_stated_pay"]

GONE_STATUSES = (404, 410)
PAY_CONCURRENCY = 8  # one-job requests in flight at once while reading pay ranges


@dataclass(frozen=True)
class JobCheck:
    """`posting` when live; `gone` when the board answered 404/410; else `error` says why."""

    posting: Posting | None = None
    gone: bool = False
    error: str = ""


def board_for(posting: Posting, boards: Iterable[BoardConfig]) -> BoardConfig:
    """The configured board the posting came from (its base URL), else the public API's."""
    for board in boards:
        if board.kind == posting.source and board.token == posting.board:
            return board
    return BoardConfig(posting.source, posting.board, posting.company)


async def _fetch(session: aiohttp.ClientSession, board: BoardConfig, external_id: str
                 ) -> JobCheck:
    url = board.job_url(external_id)
    async with session.get(url, headers={"Accept": "application/json"}) as response:
        if response.status in GONE_STATUSES:
            return JobCheck(gone=True, error=f"HTTP {response.status} from {url}")
        if response.status >= 400:
            return JobCheck(error=f"HTTP {response.status} from {url}")
        data = await response.json(content_type=None)
    parse = parse_greenhouse if board.kind == "greenhouse" else parse_lever
    found = parse({"jobs": [data]} if board.kind == "greenhouse" else [data], board)
    return JobCheck(posting=found[0])


async def _checked(session: aiohttp.ClientSession, board: BoardConfig, external_id: str
                   ) -> JobCheck:
    try:
        return await _fetch(session, board, external_id)
    except TimeoutError:
        return JobCheck(error="timed out")
    except (aiohttp.ClientError, ValueError) as exc:
        return JobCheck(error=f"{type(exc).__name__}: {exc}")


async def check_posting(posting: Posting, boards: Iterable[BoardConfig], *,
                        timeout: float = DEFAULT_TIMEOUT) -> JobCheck:
    """Ask the board for this one posting; never raises."""
    board = board_for(posting, boards)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        return await _checked(session, board, posting.external_id)


async def with_stated_pay(postings: Sequence[Posting], boards: Iterable[BoardConfig], *,
                          timeout: float = DEFAULT_TIMEOUT) -> tuple[list[Posting], list[Posting]]:
    """(live, gone): Greenhouse postings completed with the pay their one-job view states, and
    those whose one-job view answered 404/410 (taken down since the list was read).

    A posting whose view cannot be read otherwise keeps no pay (so no salary verdict) and is
    kept: only a definite 404/410 drops it."""
    boards = list(boards)
    gate = asyncio.Semaphore(PAY_CONCURRENCY)

    async def one(session: aiohttp.ClientSession, posting: Posting) -> Posting | None:
        if posting.source != "greenhouse" or posting.pay_max is not None:
            return posting
        async with gate:
            check = await _checked(session, board_for(posting, boards), posting.external_id)
        if check.gone:
            return None
        if check.posting is None or check.posting.pay_max is None:
            return posting
        found = check.posting
        return dataclasses.replace(posting, pay_min=found.pay_min, pay_max=found.pay_max,
                                   pay_currency=found.pay_currency)

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        read = await asyncio.gather(*(one(session, p) for p in postings))
    live = [found for found in read if found is not None]
    return live, [p for p, found in zip(postings, read, strict=True) if found is None]
