"""The deterministic drafter: bullet and skill order, cover letter, honoured feedback."""

from __future__ import annotations

import tomllib
from dataclasses import replace

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse, parse_lever
from workloads.job_applications.drafting import Draft, draft_deterministic, parse_feedback
from workloads.job_applications.latex import render_cv
from workloads.job_applications.profile import Profile, parse_profile

from .conftest import EXAMPLE_PROFILE
from .fake_boards import greenhouse_jobs, lever_postings


@pytest.fixture(scope="module")
def backend() -> Posting:
    return parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nordwind"))[0]


@pytest.fixture(scope="module")
def platform() -> Posting:
    return parse_lever(lever_postings("http://t"), BoardConfig("lever", "fjord", "Fjord"))[0]


def _bullets(draft: Draft) -> list[str]:
    ranked = [b for entry in draft.entries for b in entry.bullets]
    return [b.text for b in sorted(ranked, key=lambda b: b.rank)]


def test_bullets_and_skills_follow_the_posting(
    profile: Profile, backend: Posting, platform: Posting
) -> None:
    for_backend = draft_deterministic(backend, profile)
    for_platform = draft_deterministic(platform, profile)
    assert _bullets(for_backend)[0].startswith("Designed a PostgreSQL-backed job queue")
    assert _bullets(for_platform)[0].startswith("Led the migration of twelve services")
    assert for_backend.skills[:2] == ("Python", "PostgreSQL")
    assert for_platform.skills[0] == "Kubernetes"
    # Entries keep the profile's (chronological) order; bullets inside are by relevance.
    assert [e.company for e in for_backend.entries] == [e.company for e in profile.experience]
    ranks = [b.rank for b in for_backend.entries[0].bullets]
    assert ranks == sorted(ranks)
    assert sorted(b.rank for e in for_backend.entries for b in e.bullets) == list(range(1, 9))


def test_drafting_is_deterministic(profile: Profile, backend: Posting) -> None:
    assert draft_deterministic(backend, profile) == draft_deterministic(backend, profile)


def test_cover_letter_ties_requirements_to_experience(profile: Profile, backend: Posting) -> None:
    draft = draft_deterministic(backend, profile)
    opening, evidence, closing = draft.cover_letter
    assert opening.startswith(
        "I am writing to apply for the Senior Backend Engineer (Python, "
        "PostgreSQL) position at Nordwind Energie GmbH."
    )
    # Kafka is only in the posting's salary line, so it is not asked for; the job queue, the
    # best match, is told whole, with its figures.
    assert evidence.startswith("Your posting asks for Python, PostgreSQL, Kubernetes and "
                               "observability. ")
    assert (
        "For Python and PostgreSQL: at Kontor Logistics GmbH, where I work as Senior Backend "
        "Engineer, I designed a PostgreSQL-backed job queue that runs 2.4 million shipment tasks "
        "a day with a p99 pickup latency under 80 ms."
    ) in evidence
    assert "at Fjord Payments AB, where I worked as Backend Engineer, I " in evidence
    assert closing.endswith("I could start after my notice period of 3 months.")
    assert draft.drafter == "deterministic" and draft.notes == ()
    assert draft.posting_key == "greenhouse:nordwind:4012345"


def test_feedback_emphasis_moves_bullets_and_skills_first(
    profile: Profile, backend: Posting
) -> None:
    draft = draft_deterministic(backend, profile, "emphasize: mentoring, Kafka")
    assert _bullets(draft)[0].startswith(("Mentored", "Replaced a nightly batch export"))
    assert set(draft.skills[:2]) == {"mentoring", "Kafka"}
    assert draft.notes == ("feedback: emphasized mentoring, Kafka",)


def test_feedback_free_text_naming_a_skill_is_an_emphasis(
    profile: Profile, backend: Posting
) -> None:
    draft = draft_deterministic(backend, profile, "Please say more about my Django work.\nthanks!")
    assert _bullets(draft)[0].startswith("Maintained a Django platform")
    assert draft.notes == ("feedback: emphasized Django", "feedback not applied: thanks!")


def test_feedback_omit_and_paragraph(profile: Profile, backend: Posting) -> None:
    draft = draft_deterministic(
        backend,
        profile,
        "omit: Kafka\nparagraph: I have followed Nordwind since your 2024 grid pilot.",
    )
    assert not any("Kafka" in text for text in _bullets(draft))
    assert "Kafka" not in draft.skills
    assert draft.cover_letter[-2] == "I have followed Nordwind since your 2024 grid pilot."
    assert draft.cover_letter[-1].startswith("I would welcome the chance")
    assert draft.notes == ("feedback: omitted Kafka", "feedback: added a cover-letter paragraph")


def test_without_lowest_drops_the_highest_rank_numbers(profile: Profile, backend: Posting) -> None:
    draft = draft_deterministic(backend, profile)
    shorter = draft.without_lowest(3)
    assert shorter.bullet_count == draft.bullet_count - 3
    assert _bullets(shorter) == _bullets(draft)[:-3]


def test_parse_feedback_ignores_blank_lines(profile: Profile) -> None:
    feedback = parse_feedback("\n  \nFOCUS: Go\n", profile)
    assert feedback.emphasize == ("Go",) and feedback.notes == ("feedback: emphasized Go",)
    assert parse_feedback(None, profile).notes == ()


def test_an_emphasis_note_visibly_changes_both_the_cv_and_the_letter(
    profile: Profile, backend: Posting
) -> None:
    plain = draft_deterministic(backend, profile)
    asked = draft_deterministic(backend, profile, "emphasise HIPAA and PostgreSQL")
    assert plain.highlights == () and "Focus for this role" not in render_cv(plain, profile)
    assert "Focus for this role:} PostgreSQL" in render_cv(asked, profile)
    added = [p for p in asked.cover_letter if p not in plain.cover_letter]
    # The emphasis is backed by a bullet the letter has not told yet, told whole.
    assert added == ["For the Senior Backend Engineer (Python, PostgreSQL) role, I would "
                     "especially like to point to my work with PostgreSQL. For PostgreSQL: also "
                     "at Fjord Payments AB, I built the settlement service in Go that reconciles "
                     "card payments across 9 currencies, handling €40M a month."]
    assert "HIPAA" not in " ".join(asked.cover_letter)  # never claimed: the profile lacks it
    assert asked.notes == ("feedback: emphasized PostgreSQL",
                           "feedback not applied: HIPAA is not in the profile")
    unrelated = draft_deterministic(backend, profile, "thanks!")
    assert unrelated.cover_letter == plain.cover_letter  # a note asking nothing changes nothing


def test_the_letter_leaves_out_an_empty_notice_period(profile: Profile, backend: Posting) -> None:
    assert "notice period of 3 months." in draft_deterministic(backend, profile).cover_letter[-1]
    none = replace(profile, answers=replace(profile.answers, notice_period=""))
    closing = draft_deterministic(backend, none).cover_letter[-1]
    assert "notice period" not in closing
    assert closing.endswith("how I could contribute to Nordwind Energie GmbH.")
    assert parse_profile(_without_notice(), source="p.toml").answers.notice_period == ""


def _without_notice() -> dict[str, object]:
    data = tomllib.loads(EXAMPLE_PROFILE.read_text("utf-8"))
    del data["answers"]["notice_period"]
    return data
