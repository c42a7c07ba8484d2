"""The letter corpus: letters for many postings, each also after the revise notes the README
documents, read sentence by sentence.

Every sentence must come from one profile bullet (restated whole, only a bracketed aside left
out), from a template sentence, or from the person's own `paragraph:`; its numbers must be
in the profile; every term after "asks for" must be in the posting's requirements. The test
prints the pass rate, and the text of three letters read back from the real PDF (pdflatex,
pdftotext): run it with `-s` to see them.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from workloads.job_applications.boards import BoardConfig, Posting, parse_greenhouse, parse_lever
from workloads.job_applications.drafting import Draft, draft_deterministic
from workloads.job_applications.feedback import parse_feedback
from workloads.job_applications.latex import build_cover_letter
from workloads.job_applications.letter import letter_facts, restate
from workloads.job_applications.letter_checks import (
    TEMPLATES,
    letter_problems,
    sentence_source,
    shared_sentences,
)
from workloads.job_applications.posting_requirements import requirement_text
from workloads.job_applications.profile import Profile
from workloads.job_applications.sentences import split_sentences
from workloads.job_applications.terms import mentions

from .fake_boards import greenhouse_jobs, lever_postings, polaris_jobs
from .test_letter import CICD, DOTNET, HEALTH, MOVE_BULLET, RAN_BULLET

# The revise notes workloads/job_applications/README.md documents ("Your answers").
README_NOTES = (
    "emphasize: Kafka, Go",
    "focus: mentoring",
    "omit: PHP",
    "drop: Kafka",
    "paragraph: I have followed your engineering blog for two years.",
    "more about on-call please",
)


def _written(title: str, company: str, text: str) -> Posting:
    return Posting("lever", company.casefold().replace(" ", "-"), title.casefold(), company,
                   title, "Berlin, Germany", False, "https://example.org/p",
                   "https://example.org/p/apply", text)


# Postings written for this test: requirements in sections or in words, negations, pluses,
# mentions that are not requirements, and text that asks for nothing the profile has.
WRITTEN = [
    _written("Site Reliability Engineer", "Pagewise",
             "About us\nWe run Go and Kafka at scale.\nWhat you'll need\n- On-call experience "
             "and observability with Prometheus\n- Kubernetes\nNice to have\n- Go"),
    _written("Data Platform Engineer", "Streamhaus",
             "Experience with Kafka and data pipelines is required. We do not use Python; our "
             "stack is Scala."),
    _written("Frontend Engineer", "Pixelhof",
             "React and TypeScript are required. This role has no backend work, so no "
             "PostgreSQL or Kubernetes."),
    _written("Head Chef", "Brasserie Nord",
             "Lead our kitchen of twelve cooks. Seasonal menus, local suppliers, HACCP."),
    _written("Account Executive", "Sellwell",
             "You will own a quota and close deals with retail customers across the DACH "
             "region."),
    _written("Payments Engineer", "Clearline",
             "You have built payment systems in Go. PostgreSQL is a plus."),
    _written("Engineering Manager", "Lumen Labs",
             "What you'll do\n- Mentor engineers and run design reviews\n- Grow a team of 8\n"
             "Requirements\n- Leadership experience is required"),
    _written("Django Developer", "Archivista",
             "About us\nOur founders wrote Kafka tooling.\nWhat you'll do\n- Build REST APIs in "
             "Django\n- Keep our PostgreSQL backups tested"),
    _written("Performance Engineer", "Loadstar",
             "Requirements: load testing and performance work in Python, not Java."),
    _written("Infrastructure Engineer", "Gridline",
             "Kubernetes experience is not required. You will write Terraform and improve our "
             "CI/CD."),
    _written("Backend Engineer (Go)", "Norrsken",
             "This is a Go role, not a Python role. You need PostgreSQL and distributed systems "
             "experience."),
]


@pytest.fixture(scope="module")
def corpus_profile(profile: Profile) -> Profile:
    """The example profile plus the bullets of the issue's letters (health data, CI move)."""
    kontor = dataclasses.replace(profile.experience[0],
                                 bullets=(*profile.experience[0].bullets, MOVE_BULLET))
    leipzig = dataclasses.replace(profile.experience[2],
                                  bullets=(*profile.experience[2].bullets, RAN_BULLET))
    return dataclasses.replace(profile, experience=(kontor, profile.experience[1], leipzig))


def corpus_postings() -> list[Posting]:
    return [
        *parse_greenhouse(greenhouse_jobs("http://t"), BoardConfig("greenhouse", "nordwind",
                                                                    "Nordwind Energie GmbH")),
        *parse_lever(lever_postings("http://t"), BoardConfig("lever", "fjord", "Fjord Analytics")),
        *parse_greenhouse(polaris_jobs("http://t"), BoardConfig("greenhouse", "polaris",
                                                                 "Polaris Systems")),
        HEALTH, CICD, DOTNET, *WRITTEN,
    ]


def _template_pattern(template: str) -> re.Pattern[str]:
    pattern = re.escape(template)
    for slot in ("role", "company", "asked", "wanted", "notice"):
        pattern = pattern.replace(re.escape("{" + slot + "}"), ".+?")
    return re.compile(pattern)


_TEMPLATES = [_template_pattern(t) for t in TEMPLATES.values()]


def _sentence_faults(sentence: str, posting: Posting, profile: Profile, draft: Draft,
                     note: str | None) -> list[str]:
    """Independent of letter_checks' own reading: what is wrong with one sentence."""
    wishes = parse_feedback(note, profile)
    printed = [b.text for e in draft.entries for b in e.bullets]
    facts = letter_facts(posting, profile, wishes, printed)
    source = sentence_source(sentence, facts)
    faults = []
    if source == "own":
        return [] if any(sentence in p for p in wishes.paragraphs) else ["not the note's words"]
    if source.startswith("bullet:"):
        bullet = facts.bullets[int(source.split(":")[1])]
        said = restate(bullet.text)
        if f"{said[0].lower()}{said[1:]}." not in sentence and f"{said}." not in sentence:
            faults.append(f"does not restate its whole bullet: {bullet.text!r}")
    elif not any(t.fullmatch(sentence) for t in _TEMPLATES):
        faults.append(f"maps to no bullet and no template ({source})")
    text = sentence.replace(posting.title, " ").replace(posting.company, " ")
    numbers = set(re.findall(r"\d+(?:\.\d+)?", text))
    faults += [f"number {n} is not in the profile" for n in sorted(numbers)
               if n not in facts.profile_text]
    asked = re.search(r"asks for (.+?)\.$", sentence)
    if asked:
        requirements = requirement_text(posting)
        faults += [f"asks for {term!r}, not a requirement"
                   for term in re.split(r", | and ", asked.group(1))
                   if not mentions(term, requirements)]
    return faults


def _letters(profile: Profile) -> list[tuple[Posting, str | None, Draft]]:
    return [(posting, note, draft_deterministic(posting, profile, note))
            for posting in corpus_postings() for note in (None, *README_NOTES)]


def test_every_sentence_of_every_letter_is_true_to_the_profile(corpus_profile: Profile) -> None:
    letters = _letters(corpus_profile)
    total = passed = 0
    failures = []
    for posting, note, draft in letters:
        printed = [b.text for e in draft.entries for b in e.bullets]
        facts = letter_facts(posting, corpus_profile, parse_feedback(note, corpus_profile),
                             printed)
        assert letter_problems(draft.cover_letter, facts) == [], (posting.title, note)
        for paragraph in draft.cover_letter:
            for sentence in split_sentences(paragraph):
                total += 1
                faults = _sentence_faults(sentence, posting, corpus_profile, draft, note)
                passed += not faults
                failures += [(posting.title, note, sentence, faults)] if faults else []
    postings = len(corpus_postings())
    print(f"\nletter corpus: {len(letters)} letters ({postings} postings x "
          f"{1 + len(README_NOTES)} notes), {total} sentences, {passed} pass: "
          f"{100 * passed / total:.1f}%")
    assert failures == []
    plain = [draft.cover_letter for _, note, draft in letters if note is None]
    assert shared_sentences(plain) == []
    assert shared_sentences([draft.cover_letter for _, _, draft in letters]) == []


def test_a_bullet_matching_no_requirement_is_never_told(corpus_profile: Profile) -> None:
    """The health bullet (Python, HIPAA) is told only where a requirement names one of them."""
    for posting, note, draft in _letters(corpus_profile):
        if note is not None:
            continue
        told = RAN_BULLET.text.split(",")[0][1:] in " ".join(draft.cover_letter)
        asks = any(mentions(t, requirement_text(posting)) for t in RAN_BULLET.skills)
        assert not told or asks, posting.title


@pytest.mark.slow
async def test_three_letters_read_from_the_real_pdf(corpus_profile: Profile,
                                                     tmp_path: Path) -> None:
    by_title = {p.title: p for p in corpus_postings()}
    for title, note in (("Senior Backend Engineer (Python, PostgreSQL)", None),
                        (".NET Engineer", None),
                        ("Site Reliability Engineer", "emphasize: Kafka, Go")):
        draft = draft_deterministic(by_title[title], corpus_profile, note)
        pdf = tmp_path / "letter.pdf"
        pdf.write_bytes(await build_cover_letter(draft, corpus_profile))
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                              check=True).stdout
        print(f"\n----- {title} (revise note: {note or 'none'}) -----\n{text.strip()}")
        flat = " ".join(text.replace("’", "'").split()).replace("- ", "-")
        body = flat.split("hiring team,", 1)[1].split("Kind regards,", 1)[0]
        for paragraph in draft.cover_letter:
            assert " ".join(paragraph.split()) in body, paragraph
        # The letter as the reader gets it passes the same checks, sentence by sentence.
        printed = [b.text for e in draft.entries for b in e.bullets]
        facts = letter_facts(by_title[title], corpus_profile,
                             parse_feedback(note, corpus_profile), printed)
        assert letter_problems([body], facts) == []
        assert [f for s in split_sentences(body)
                for f in _sentence_faults(s, by_title[title], corpus_profile, draft, note)] == []
