"""The cover letter is true to the profile: letter_checks catches each fault the issue lists,
passes the deterministic letters, and the letters fit one page in the real PDF.

The corpus (every posting, every revise note) is in test_letter_corpus.py.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse, parse_lever
from workloads.job_applications.drafting import draft_deterministic
from workloads.job_applications.feedback import parse_feedback
from workloads.job_applications.latex import build_cover_letter, page_count
from workloads.job_applications.letter import letter_facts, restate
from workloads.job_applications.letter_checks import (
    LetterFacts,
    has_finite_verb,
    letter_problems,
    shared_sentences,
)
from workloads.job_applications.profile import Bullet, Profile

from .fake_boards import greenhouse_jobs, lever_postings

HIPAA_BULLET = Bullet(
    "Built a HIPAA-compliant patient-records API in Django for a hospital network, with audit "
    "logging and encrypted backups.", ("Python", "Django", "HIPAA", "REST APIs"))
# The bullets behind the faults the issue quotes ("I designed and ran Python", "I led the move").
RAN_BULLET = Bullet(
    "Designed and ran Python services for clinical-trial data under HIPAA, serving 40 clinics.",
    ("Python", "HIPAA"))
MOVE_BULLET = Bullet(
    "Led the move of 30 repositories from Jenkins to GitHub Actions, cutting build time from 25 "
    "to 8 minutes.", ("CI/CD", "GitHub Actions"))


def _posting(title: str, text: str, company: str = "Heliant Health") -> Posting:
    return Posting("greenhouse", "heliant", str(abs(hash(title)) % 10_000), company, title,
                   "Berlin, Germany", False, "https://example.org/p",
                   "https://example.org/p/apply", text)


HEALTH = _posting(
    "Backend Engineer, Patient Platform",
    "We build software for hospitals. You will work on Django and Python services that handle "
    "patient data under HIPAA. Experience with HIPAA compliance and Django is required. "
    "PostgreSQL is a plus.")
CICD = _posting("CI/CD Engineer", "Requirements\n- CI/CD pipelines with GitHub Actions\n"
                "- Kubernetes\n- Terraform", company="Buildwerk")
DOTNET = _posting(".NET Engineer", "We build our platform in C# and .NET. This is not a Python "
                  "role.\nRequirements\n- C# and .NET\n- SQL", company="Kassa AG")
NOTES = (None, "emphasize: Kafka", "emphasise HIPAA and PostgreSQL", "focus: mentoring, Go",
         "more about on-call please\nparagraph: I have followed your work since 2024.",
         "omit: Kafka\nemphasize: Terraform")


@pytest.fixture(scope="module")
def health_profile(profile: Profile) -> Profile:
    """The example profile with a health job like the one the issue's letters drew on."""
    kontor = dataclasses.replace(profile.experience[0],
                                 bullets=(*profile.experience[0].bullets, MOVE_BULLET))
    leipzig = dataclasses.replace(profile.experience[2], bullets=(HIPAA_BULLET, RAN_BULLET))
    return dataclasses.replace(profile, experience=(kontor, profile.experience[1], leipzig))


@pytest.fixture(scope="module")
def postings() -> list[Posting]:
    greenhouse = parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nw"))
    lever = parse_lever(lever_postings("http://t"), BoardConfig("lever", "fjord", "Fjord"))
    return [HEALTH, CICD, DOTNET, *greenhouse[:2], *lever[:2]]


def _facts(posting: Posting, profile: Profile, note: str | None = None) -> LetterFacts:
    printed = [b.text for e in profile.experience for b in e.bullets]
    return letter_facts(posting, profile, parse_feedback(note, profile), printed)


@pytest.mark.parametrize(("sentence", "verb"), [
    ("I am a backend engineer with nine years of experience.", True),
    ("Your posting asks for Python and SQL.", True),
    ("For Python: at Kontor, where I work as engineer, I designed a job queue.", True),
    ("I would welcome the chance to talk about the role.", True),
    ("Backend engineer with nine years of experience building services in Python and Go.",
     False),
    # The issue's second sentence: "that keeps" is a relative clause, not the sentence's verb.
    ("Senior backend and platform engineer with eight years of experience building platforms "
     "that keeps product teams fast.", False),
    ("Senior engineer with eight years of experience who is calm on call.", False),
    ("Thank you for considering my application.", False),
    ("PostgreSQL, Kafka and on-call runbooks.", False),
])
def test_the_verb_check(sentence: str, verb: bool) -> None:
    assert has_finite_verb(sentence) is verb


FAULTS = [
    # (posting, sentence, the problem it must raise)
    (HEALTH, "At Universität Leipzig, I designed and ran Python.", "a claim cut mid-phrase"),
    (CICD, "At Kontor Logistics GmbH, I led the move.", "a claim cut mid-phrase"),
    (CICD, "At Kontor Logistics GmbH, I led the move of 30 repositories from Jenkins to GitHub "
     "Actions.", "a claim without its bullet's figures (25, 8)"),
    (CICD, "At Kontor Logistics GmbH, I led the move of 30 repositories from Jenkins to GitHub "
     "Actions, cutting build time from 25 to 8 minutes for clinical-trial data.",
     "a claim joined to another bullet's object (clinical-trial, data)"),
    (CICD, "At Kontor Logistics GmbH, I led the move of 30 repositories from Jenkins to GitHub "
     "Actions, cutting build time from 25 to 5 minutes.", "a number the profile does not give"),
    (DOTNET, "Your posting asks for Python and SQL.",
     "\"asks for\" names 'Python', which the posting's requirements do not ask for"),
    # The health bullet in a CI/CD letter: it matches none of that posting's requirements.
    (CICD, "For HIPAA: at Universität Leipzig, where I worked as Research Software Engineer, I "
     "built a HIPAA-compliant patient-records API in Django for a hospital network, with audit "
     "logging and encrypted backups.",
     "a claim whose bullet matches none of the posting's requirements"),
    (CICD, "Senior backend and platform engineer with eight years of experience building "
     "platforms that keeps product teams fast.", "a sentence without a verb"),
    (CICD, "I look forward to hearing from you.", "a sentence that would fit any letter"),
    (HEALTH, "I would love to grow with Heliant Health. I would love to grow with Heliant "
     "Health.", "a sentence said twice"),
]


@pytest.mark.parametrize(("posting", "sentence", "problem"), FAULTS)
def test_each_fault_the_issue_lists_is_caught(
    health_profile: Profile, posting: Posting, sentence: str, problem: str
) -> None:
    facts = _facts(posting, health_profile)
    problems = letter_problems([sentence], facts)
    assert any(p.startswith(problem) for p in problems), problems
    # ... and the deterministic letter for the same posting has none of them.
    letter = draft_deterministic(posting, health_profile).cover_letter
    assert letter_problems(letter, facts) == [], letter


def test_a_less_relevant_bullet_told_instead_of_a_better_one_is_caught(
    health_profile: Profile
) -> None:
    facts = _facts(CICD, health_profile)
    migration = health_profile.experience[0].bullets[1]  # CI/CD, Kubernetes and Terraform
    worse = ("For CI/CD: at Kontor Logistics GmbH, where I work as Senior Backend Engineer, I "
             f"{MOVE_BULLET.text[0].lower()}{MOVE_BULLET.text[1:]}")  # CI/CD only
    assert letter_problems([worse], facts) == [
        f"a more relevant bullet is not told: {migration.text!r}"]
    best = draft_deterministic(CICD, health_profile).cover_letter[1]
    assert f"I {restate(migration.text)[0].lower()}{restate(migration.text)[1:]}." in best
    assert letter_problems([best], facts) == []
    assert letter_problems([best, worse], facts) == []  # both told: the best is not left out


def test_shared_sentences_finds_what_most_letters_say() -> None:
    common = "I look forward to hearing from you."
    letters = [[f"I am writing to Acme {n}. {common}"] for n in range(3)] + [["Another one."]]
    assert shared_sentences(letters) == [common]
    assert shared_sentences([*letters[:1], ["Another one."], ["A third."]]) == []


def test_asks_for_names_requirements_not_negations_or_mentions(health_profile: Profile) -> None:
    node = _posting("Node Engineer", "Requirements\n- Node.js and .NET\n- Python is a plus")
    facts = _facts(node, health_profile)
    # A dot inside a name ("Node.js", ".NET") does not end the list.
    assert letter_problems(["Your posting asks for Node.js and .NET."], facts) == []
    assert letter_problems(["Your posting asks for Node.js and Python."], facts) == [
        "\"asks for\" names 'Python', which the posting's requirements do not ask for"]
    dotnet = draft_deterministic(DOTNET, health_profile).cover_letter
    assert "Your posting asks for SQL." in dotnet[1] and "Python" not in " ".join(dotnet)
    nordwind = parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nw"))[0]
    letter = draft_deterministic(nordwind, health_profile).cover_letter
    # Kafka is only in the posting's salary line: a mention, not a requirement.
    assert "Kafka" not in letter[1].split(".")[0]


@pytest.mark.parametrize("note", NOTES)
def test_letters_pass_the_check_for_every_posting_and_note(
    health_profile: Profile, postings: list[Posting], note: str | None
) -> None:
    for posting in postings:
        draft = draft_deterministic(posting, health_profile, note)
        printed = [b.text for e in draft.entries for b in e.bullets]
        facts = letter_facts(posting, health_profile, parse_feedback(note, health_profile),
                             printed)
        assert letter_problems(draft.cover_letter, facts) == [], (posting.title, note,
                                                                  draft.cover_letter)


def test_the_health_posting_keeps_hipaa_and_django_after_an_emphasis_revise(
    health_profile: Profile
) -> None:
    plain = draft_deterministic(HEALTH, health_profile)
    revised = draft_deterministic(HEALTH, health_profile, "emphasize: Kafka")
    for draft in (plain, revised):
        evidence = draft.cover_letter[1]
        assert "I built a HIPAA-compliant patient-records API in Django for a hospital " \
            "network, with audit logging and encrypted backups." in evidence
    [added] = [p for p in revised.cover_letter if p not in plain.cover_letter]
    assert added.startswith("For the Backend Engineer, Patient Platform role, I would "
                            "especially like to point to my work with Kafka. For Kafka: ")
    assert "I replaced a nightly batch export with a Kafka change-data-capture pipeline, " \
        "bringing reporting lag from 24 hours to 2 minutes." in added


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
