"""Fetching Greenhouse and Lever boards and normalizing their postings."""

from __future__ import annotations

import pytest

from workloads.job_applications.board_jobs import check_posting
from workloads.job_applications.boards import (
    BoardConfig,
    BoardFormatError,
    Posting,
    fetch_all,
    parse_greenhouse,
    parse_lever,
)
from workloads.job_applications.htmltext import escaped_html_to_text, html_to_text

from .fake_boards import GREENHOUSE_COMPANY, LATEX_TITLE
from .fake_site import FakeSite


def _boards(site: FakeSite, *extra: BoardConfig) -> list[BoardConfig]:
    return [
        BoardConfig("greenhouse", "nordwind", base_url=f"{site.base}/gh"),
        BoardConfig("lever", "fjord", company="Fjord Analytics", base_url=f"{site.base}/lever-api"),
        *extra,
    ]


def _by_id(postings: tuple[Posting, ...]) -> dict[str, Posting]:
    return {p.external_id: p for p in postings}


async def test_fetch_all_normalizes_greenhouse_postings(site: FakeSite) -> None:
    report = await fetch_all(_boards(site))
    assert report.errors == ()
    posting = _by_id(report.postings)["4012345"]
    assert posting.source == "greenhouse" and posting.board == "nordwind"
    assert posting.company == GREENHOUSE_COMPANY  # from company_name
    assert posting.title == "Senior Backend Engineer (Python, PostgreSQL)"
    assert posting.location == "Berlin, Germany" and posting.remote is False
    assert posting.url == posting.apply_url == f"{site.base}/greenhouse/nordwind/jobs/4012345"
    assert posting.team == "Engineering"
    assert posting.updated_at == "2026-11-20T10:12:03-05:00"
    # Entities decoded (&rsquo; &#39; &amp; &nbsp;), tags gone, list items on their own lines.
    assert "Germany’s grid" in posting.text
    assert "- Mentor engineers & review designs" in posting.text
    assert "80.000 € – 95.000 €" in posting.text
    assert "<" not in posting.text and "&" not in posting.text.replace(" & ", "")


async def test_company_falls_back_to_board_token_without_company_name(site: FakeSite) -> None:
    report = await fetch_all(_boards(site))
    latex = _by_id(report.postings)["4012346"]
    assert latex.company == "nordwind"
    assert latex.title == LATEX_TITLE
    assert "C# tooling & R&D: 100% $ _ {} ~ ^ \\ are all in this text." in latex.text
    assert _by_id(report.postings)["4012347"].remote is True  # "Remote - Europe"


async def test_fetch_all_normalizes_lever_postings(site: FakeSite) -> None:
    report = await fetch_all(_boards(site))
    posting = _by_id(report.postings)["5f1c2a4e-8d7b-4c1e-9a3f-2b6d8e0f1a2c"]
    assert posting.source == "lever" and posting.company == "Fjord Analytics"
    assert posting.title == "Platform Engineer (Kubernetes)"
    assert posting.location == "Stockholm or Remote" and posting.remote is True
    assert posting.url.endswith("/lever/fjord/5f1c2a4e-8d7b-4c1e-9a3f-2b6d8e0f1a2c")
    assert posting.apply_url == f"{posting.url}/apply"
    assert posting.team == "Platform"
    assert posting.updated_at.startswith("2025-11-24T")
    assert "What you'll do\n- Operate Kubernetes clusters with Terraform" in posting.text
    assert "Calm during on-call & incidents" in posting.text
    assert posting.text.endswith("Salary range 700 000 – 820 000 SEK.")
    hybrid = _by_id(report.postings)["7c2d4e6f-1a3b-4c5d-9e8f-0a1b2c3d4e5f"]
    assert hybrid.remote is False


async def test_one_failing_board_does_not_stop_the_others(site: FakeSite) -> None:
    failing = (
        BoardConfig("greenhouse", "broken", base_url=f"{site.base}/gh"),  # HTTP 500
        BoardConfig("greenhouse", "nobody", base_url=f"{site.base}/gh"),  # HTTP 404
        BoardConfig("lever", "garbled", base_url=f"{site.base}/lever-api"),  # truncated JSON
        BoardConfig("greenhouse", "slow", base_url=f"{site.base}/gh"),  # times out
        BoardConfig("lever", "refused", base_url="http://127.0.0.1:9"),  # nothing listens
    )
    report = await fetch_all(_boards(site, *failing), timeout=0.3)
    assert len(report.postings) == 8
    errors = {e.board: e.error for e in report.errors}
    assert set(errors) == {
        "greenhouse:broken",
        "greenhouse:nobody",
        "lever:garbled",
        "greenhouse:slow",
        "lever:refused",
    }
    assert "500" in errors["greenhouse:broken"]
    assert "404" in errors["greenhouse:nobody"]
    assert "JSONDecodeError" in errors["lever:garbled"]
    assert errors["greenhouse:slow"] == "timed out"
    assert "ClientConnectorError" in errors["lever:refused"]


def test_unexpected_shapes_are_format_errors() -> None:
    board = BoardConfig("greenhouse", "x")
    with pytest.raises(BoardFormatError, match="jobs"):
        parse_greenhouse({"postings": []}, board)
    with pytest.raises(BoardFormatError, match="missing `title`"):
        parse_greenhouse({"jobs": [{"id": 1, "absolute_url": "https://x"}]}, board)
    with pytest.raises(BoardFormatError, match="array"):
        parse_lever({"ok": False}, BoardConfig("lever", "x"))


def test_board_urls_follow_the_public_apis() -> None:
    assert BoardConfig("greenhouse", "acme").url == (
        "https://boards-api.greenhouse.io/v1/boards/acme/jobs?content=true"
    )
    assert BoardConfig("lever", "acme").url == "https://api.lever.co/v0/postings/acme?mode=json"
    with pytest.raises(ValueError, match="unknown board kind"):
        BoardConfig("workday", "acme")  # type: ignore[arg-type]


def test_html_to_text_handles_entities_blocks_and_scripts() -> None:
    assert html_to_text("<p>A&amp;B</p><script>x()</script><p>C&nbsp;&euro;</p>") == "A&B\n\nC €"
    assert escaped_html_to_text("&lt;ul&gt;&lt;li&gt;one&lt;/li&gt;&lt;/ul&gt;") == "- one"


async def test_one_posting_is_read_with_its_pay_and_a_removed_one_is_gone(site: FakeSite) -> None:
    polaris = BoardConfig("greenhouse", "polaris", base_url=f"{site.base}/gh")
    paid = {p.external_id: p for p in (await fetch_all([polaris])).postings}
    assert paid["5010007"].pay_max is None  # the list states no pay, as on Greenhouse
    boards = [*_boards(site), polaris]
    check = await check_posting(paid["5010007"], boards)
    assert check.posting is not None and not check.gone
    assert (check.posting.pay_min, check.posting.pay_max, check.posting.pay_currency) == (
        50000, 65000, "EUR")
    site.boards.remove("5010007")
    gone = await check_posting(paid["5010007"], boards)
    assert gone.gone and gone.posting is None and "HTTP 404" in gone.error
    assert "5010007" not in {p.external_id for p in (await fetch_all([polaris])).postings}


def test_lever_states_yearly_pay_only() -> None:
    item = {"id": "x", "text": "Engineer", "hostedUrl": "https://jobs.lever.co/a/x",
            "salaryRange": {"min": 70000, "max": 90000, "currency": "eur",
                            "interval": "per-year-salary"}}
    [yearly] = parse_lever([item], BoardConfig("lever", "a"))
    assert (yearly.pay_min, yearly.pay_max, yearly.pay_currency) == (70000, 90000, "EUR")
    hourly = {**item, "salaryRange": {**item["salaryRange"], "interval": "per-hour-wage"}}
    assert parse_lever([hourly], BoardConfig("lever", "a"))[0].pay_max is None
