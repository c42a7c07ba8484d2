"""Hard-requirement filtering and relevance ranking."""

from __future__ import annotations

from dataclasses import replace

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse, parse_lever
from workloads.job_applications.profile import Profile
from workloads.job_applications.rank import (
    dedupe_key,
    filter_postings,
    rank,
    score_posting,
    seniority_of,
)

from .fake_boards import LATEX_TITLE, greenhouse_jobs, lever_postings


@pytest.fixture(scope="module")
def postings() -> list[Posting]:
    return [
        *parse_greenhouse(
            greenhouse_jobs("http://boards.test"), BoardConfig("greenhouse", "nordwind")
        ),
        *parse_lever(
            lever_postings("http://boards.test"),
            BoardConfig("lever", "fjord", company="Fjord Analytics"),
        ),
    ]


def _titled(postings: list[Posting], title: str) -> Posting:
    return next(p for p in postings if p.title.startswith(title))


def test_filter_gives_a_reason_for_every_rejection(
    profile: Profile, postings: list[Posting]
) -> None:
    kept, rejected = filter_postings(postings, profile)
    reasons = {r.posting.title: r.reason for r in rejected}
    assert reasons == {
        LATEX_TITLE: "location: Zürich, Switzerland not accepted",
        "Principal Platform Engineer": "seniority: principal",
        "Backend Engineer, Trading": "excluded keyword: crypto",
        "Junior Frontend Developer": "seniority: junior",
    }
    assert [p.title for p in kept] == [
        "Senior Backend Engineer (Python, PostgreSQL)",
        "Data Engineer (position closed)",
        "Platform Engineer (Kubernetes)",
        "Staff Data Engineer",
    ]


def test_excluded_company_and_several_reasons_at_once(
    profile: Profile, postings: list[Posting]
) -> None:
    posting = replace(
        _titled(postings, "Principal"),
        company="hyperscale ads inc.",
        location="Paris, France",
        remote=False,
    )
    _, rejected = filter_postings([posting], profile)
    assert rejected[0].reasons == (
        "excluded company: hyperscale ads inc.",
        "location: Paris, France not accepted",
        "seniority: principal",
    )


def test_remote_only_rejects_office_roles(profile: Profile, postings: list[Posting]) -> None:
    remote_only = replace(
        profile, requirements=replace(profile.requirements, remote_only=True, accepted_locations=())
    )
    kept, rejected = filter_postings(postings, remote_only)
    assert {p.title for p in kept} == {"Platform Engineer (Kubernetes)"}
    assert "location: Berlin, Germany is not remote" in {r.reasons[0] for r in rejected}


def test_keywords_match_whole_words_only(profile: Profile, postings: list[Posting]) -> None:
    posting = replace(postings[0], text="We care about cryptography and blockchains.")
    kept, _ = filter_postings([posting], profile)
    assert kept == [posting]


@pytest.mark.parametrize(
    ("title", "level"),
    [
        ("Senior Staff Engineer", "staff"),
        ("Sr. Backend Engineer", "senior"),
        ("Software Engineer II", "mid"),
        ("Internal Tools Engineer", "mid"),
        ("Engineering Intern (Summer 2027)", "intern"),
        ("Tech Lead, Payments", "lead"),
        ("Head of Engineering", "director"),
        ("Junior Data Analyst", "junior"),
    ],
)
def test_seniority_of_titles(title: str, level: str) -> None:
    assert seniority_of(title) == level


def test_ranking_orders_by_relevance_with_top_terms(
    profile: Profile, postings: list[Posting]
) -> None:
    kept, _ = filter_postings(postings, profile)
    ranked = rank(kept, profile, top=3)
    assert [r.posting.title for r in ranked] == [
        "Senior Backend Engineer (Python, PostgreSQL)",
        "Platform Engineer (Kubernetes)",
        "Staff Data Engineer",
    ]
    assert ranked[0].top_terms[:2] == ("Python", "PostgreSQL")  # named in the title
    assert ranked[1].top_terms[0] == "Kubernetes"
    assert all(0 < r.score <= 100 for r in ranked)
    assert ranked[0].score > ranked[1].score > ranked[2].score
    assert ranked[0].key == "greenhouse:nordwind:4012345"


def test_title_matches_weigh_more_than_body_matches(profile: Profile) -> None:
    base = Posting("lever", "x", "1", "X", "Engineer", "Berlin", False, "u", "u", "")
    in_title = replace(base, title="Kafka Engineer")
    in_body = replace(base, text="Kafka. " * 10)  # ten mentions, dampened
    assert score_posting(in_title, profile).score > score_posting(in_body, profile).score
    assert score_posting(base, profile).score == 0
    assert score_posting(base, profile).top_terms == ()


def test_short_terms_need_their_own_casing(profile: Profile) -> None:
    base = Posting("lever", "x", "1", "X", "Engineer", "Berlin", False, "u", "u", "")
    assert "Go" not in score_posting(replace(base, text="we go the extra mile"), profile).top_terms
    assert "Go" in score_posting(replace(base, text="services in Go and golang"), profile).top_terms


def test_dedupe_key_is_stable(postings: list[Posting]) -> None:
    assert dedupe_key(postings[0]) == "greenhouse:nordwind:4012345"
    assert dedupe_key(replace(postings[0], title="Renamed")) == dedupe_key(postings[0])
    lever = next(p for p in postings if p.source == "lever")
    assert dedupe_key(lever) == f"lever:fjord:{lever.external_id}"
