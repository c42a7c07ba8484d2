"""The cover letter reads as written: whole sentences, no copied bullet, the best match kept.

Letters are generated for several postings and revise notes and read sentence by sentence
(letter_checks), and compiled with real pdflatex to check they stay on one page.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse, parse_lever
from workloads.job_applications.drafting import Draft, draft_deterministic
from workloads.job_applications.latex import build_cover_letter, page_count
from workloads.job_applications.letter import bullet_head, summary_sentence
from workloads.job_applications.letter_checks import (
    has_finite_verb,
    letter_problems,
    repeated_bullet,
)
from workloads.job_applications.profile import Bullet, Profile
from workloads.job_applications.rank import profile_terms, term_contributions
from workloads.job_applications.terms import mentions

from .fake_boards import greenhouse_jobs, lever_postings

HIPAA_BULLET = Bullet(
    "Built a HIPAA-compliant patient-records API in Django for a hospital network, with audit "
    "logging and encrypted backups.", ("Python", "Django", "HIPAA", "REST APIs"))
HEALTH = Posting(
    "greenhouse", "heliant", "7001", "Heliant Health", "Backend Engineer, Patient Platform",
    "Berlin, Germany", False, "https://example.org/7001", "https://example.org/7001/apply",
    "We build software for hospitals. You will work on Django and Python services that handle "
    "patient data under HIPAA. Experience with HIPAA compliance and Django is required. "
    "PostgreSQL is a plus.")
NOTES = (None, "emphasize: Kafka", "emphasise HIPAA and PostgreSQL", "focus: mentoring, Go",
         "more about on-call please\nparagraph: I have followed your work since 2024.",
         "omit: Kafka\nemphasize: Terraform")


@pytest.fixture(scope="module")
def health_profile(profile: Profile) -> Profile:
    """The example profile whose university job built a HIPAA system in Django."""
    leipzig = dataclasses.replace(profile.experience[2], bullets=(HIPAA_BULLET,))
    return dataclasses.replace(profile, experience=(*profile.experience[:2], leipzig))


@pytest.fixture(scope="module")
def postings() -> list[Posting]:
    greenhouse = parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nw"))
    lever = parse_lever(lever_postings("http://t"), BoardConfig("lever", "fjord", "Fjord"))
    return [HEALTH, *greenhouse[:2], *lever[:2]]


def _bullets(profile: Profile) -> list[str]:
    return [b.text for e in profile.experience for b in e.bullets]


def _best_match(posting: Posting, profile: Profile, draft: Draft) -> Bullet | None:
    """The printed bullet that fits the posting best by the posting's own terms (None: none
    shares a term with it)."""
    relevance = term_contributions(posting, profile_terms(profile))
    printed = {b.text for e in draft.entries for b in e.bullets}
    scored = [(sum(w for t, w in relevance.items()
                   if mentions(t, f"{b.text} {' '.join(b.skills)}")), -n, b)
              for n, b in enumerate(b for e in profile.experience for b in e.bullets)
              if b.text in printed]
    best = max(scored, key=lambda item: (item[0], item[1]))
    return best[2] if best[0] > 0 else None


@pytest.mark.parametrize(("sentence", "verb"), [
    ("I am a backend engineer with nine years of experience.", True),
    ("At Kontor, I designed a job queue, work that drew on Python.", True),
    ("Your posting asks for Python, which is the core of my recent work.", True),
    ("Thank you for considering my application; I look forward to hearing from you.", True),
    ("Backend engineer with nine years of experience building services in Python and Go.",
     False),
    ("Thank you for considering my application.", False),
    ("PostgreSQL, Kafka and on-call runbooks.", False),
])
def test_the_verb_check(sentence: str, verb: bool) -> None:
    assert has_finite_verb(sentence) is verb


def test_letter_problems_name_each_fault_and_pass_a_clean_letter(profile: Profile) -> None:
    bullet = profile.experience[0].bullets[0].text
    copied = f"At Kontor I {bullet[0].lower()}{bullet[1:]}"
    assert repeated_bullet(copied, _bullets(profile)) == bullet
    assert letter_problems(["Backend engineer with nine years of experience."], []) == [
        "a sentence without a verb: 'Backend engineer with nine years of experience.'"]
    assert letter_problems(["I like Go. I like Go."], []) == [
        "a sentence said twice: 'I like Go.'"]
    assert letter_problems([copied], _bullets(profile)) == [
        f"a CV bullet repeated word for word: {bullet!r}"]
    assert letter_problems(["I designed a PostgreSQL-backed job queue for Kontor."],
                           _bullets(profile)) == []  # five words are a reference, not a copy


def test_summary_and_bullet_heads_become_sentences() -> None:
    assert summary_sentence("Backend engineer with nine years of experience.\nI like Go.") == (
        "I am a backend engineer with nine years of experience.")
    assert summary_sentence("An experienced SRE.") == "I am an experienced SRE."
    assert summary_sentence("Nine years of building data platforms") == (
        "I bring nine years of building data platforms.")
    assert summary_sentence("I build data platforms in Go") == "I build data platforms in Go."
    assert bullet_head(HIPAA_BULLET.text) == (
        "Built a HIPAA-compliant patient-records API in Django")
    assert bullet_head("Led the migration of twelve services from a VM fleet to Kubernetes.") == (
        "Led the migration of twelve services")


@pytest.mark.parametrize("note", NOTES)
def test_letters_read_as_written_and_keep_the_best_match(
    health_profile: Profile, postings: list[Posting], note: str | None
) -> None:
    for posting in postings:
        draft = draft_deterministic(posting, health_profile, note)
        letter = " ".join(draft.cover_letter)
        assert letter_problems(draft.cover_letter, _bullets(health_profile)) == [], (
            posting.title, note, draft.cover_letter)
        assert not letter.startswith("Backend engineer")
        best = _best_match(posting, health_profile, draft)
        if best is None:  # nothing in common: the letter says what the background is
            assert "My background in" in letter
            continue
        head = bullet_head(best.text)
        assert f"{head[0].lower()}{head[1:]}" in letter, (posting.title, note, head)


def test_the_health_posting_keeps_hipaa_and_django_after_an_emphasis_revise(
    health_profile: Profile
) -> None:
    plain = draft_deterministic(HEALTH, health_profile)
    revised = draft_deterministic(HEALTH, health_profile, "emphasize: Kafka")
    for draft in (plain, revised):
        evidence = draft.cover_letter[1]
        assert "I built a HIPAA-compliant patient-records API in Django" in evidence
        assert "At Universität Leipzig" in evidence
    [added] = [p for p in revised.cover_letter if p not in plain.cover_letter]
    assert added.startswith("I would especially like to point to my work with Kafka. ")
    assert "Kafka" in added and HIPAA_BULLET.text not in added


@pytest.mark.slow
async def test_every_letter_fits_one_page_in_the_real_pdf(
    health_profile: Profile, postings: list[Posting], tmp_path: Path
) -> None:
    note = "\n".join(n for n in NOTES if n and not n.startswith("omit"))  # all at once
    for posting in postings:
        draft = draft_deterministic(posting, health_profile, note)
        pdf = await build_cover_letter(draft, health_profile)
        (tmp_path / "letter.pdf").write_bytes(pdf)
        info = subprocess.run(["pdfinfo", str(tmp_path / "letter.pdf")], capture_output=True,
                              text=True, check=True).stdout
        assert "Pages:           1" in info and page_count(pdf) == 1, posting.title
        text = subprocess.run(["pdftotext", str(tmp_path / "letter.pdf"), "-"],
                              capture_output=True, text=True, check=True).stdout
        assert "I would especially like to point to my work with" in " ".join(text.split())
