"""What to say for one posting: CV bullets and skills in relevance order, and a cover letter.

The deterministic drafter never invents facts: it only chooses and orders the profile's own
bullets and skills, and writes the cover letter from fixed sentences around them.

A human's revise note (`feedback`) is honoured line by line, case-insensitively:

- `emphasize: Kafka, Go` (or `focus:`): bullets and skills mentioning these terms go first.
- `omit: PHP` (or `drop:`): bullets and skills mentioning these terms are left out.
- `paragraph: Some text.`: the text is added to the cover letter, before the closing paragraph.
- any other line: profile terms it mentions are emphasized ("more about Kafka please"); a line
  naming no profile term is listed in `Draft.notes` as not applied.

Every directive applied (or not) is recorded in `Draft.notes`, so the effect is visible.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from workloads.job_applications.boards import Posting
from workloads.job_applications.profile import Bullet, Experience, Profile
from workloads.job_applications.rank import dedupe_key, profile_terms, term_contributions
from workloads.job_applications.terms import mentions

__all__ = [
    "DETERMINISTIC",
    "Draft",
    "DraftBullet",
    "DraftEntry",
    "Feedback",
    "draft_deterministic",
    "parse_feedback",
]

DETERMINISTIC = "deterministic"
MAX_BULLETS_PER_ENTRY = 6
EMPHASIS_BOOST = 100.0  # outweighs any posting relevance: the human asked for it
EVIDENCE_SENTENCES = 2
_EMPHASIZE_KEYS = {"emphasize", "emphasise", "focus"}
_OMIT_KEYS = {"omit", "drop"}


@dataclass(frozen=True)
class DraftBullet:
    text: str
    rank: int  # 1 = most relevant in the whole CV; the CV drops the highest numbers first
    score: float


@dataclass(frozen=True)
class DraftEntry:
    company: str
    title: str
    start: str
    end: str
    location: str
    bullets: tuple[DraftBullet, ...]  # most relevant first


@dataclass(frozen=True)
class Draft:
    posting_key: str
    company: str  # the posting's company
    role: str  # the posting's title
    entries: tuple[DraftEntry, ...]  # profile order (most recent first)
    skills: tuple[str, ...]  # most relevant first
    cover_letter: tuple[str, ...]  # paragraphs, without salutation and signature
    drafter: str  # DETERMINISTIC or "model:<model name>"
    notes: tuple[str, ...] = ()

    @property
    def bullet_count(self) -> int:
        return sum(len(entry.bullets) for entry in self.entries)

    def without_lowest(self, count: int) -> Draft:
        """The same draft minus its `count` lowest-ranked bullets (for fitting the page limit)."""
        keep = self.bullet_count - count
        entries = tuple(
            replace(entry, bullets=tuple(b for b in entry.bullets if b.rank <= keep))
            for entry in self.entries
        )
        return replace(self, entries=entries)


@dataclass(frozen=True)
class Feedback:
    emphasize: tuple[str, ...] = ()
    omit: tuple[str, ...] = ()
    paragraphs: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def parse_feedback(note: str | None, profile: Profile) -> Feedback:
    """Read a revise note into directives (see the module docstring for the format)."""
    emphasize: list[str] = []
    omit: list[str] = []
    paragraphs: list[str] = []
    unapplied: list[str] = []
    known = list(profile_terms(profile))
    for line in filter(str.strip, (note or "").splitlines()):
        key, _, value = (part.strip() for part in line.partition(":"))
        if key.lower() in _EMPHASIZE_KEYS and value:
            emphasize.extend(_split_terms(value))
        elif key.lower() in _OMIT_KEYS and value:
            omit.extend(_split_terms(value))
        elif key.lower() == "paragraph" and value:
            paragraphs.append(value)
        else:
            named = [term for term in known if mentions(term, line)]
            emphasize.extend(named)
            unapplied.extend([] if named else [line.strip()])
    notes = _feedback_notes(emphasize, omit, paragraphs, unapplied)
    return Feedback(tuple(emphasize), tuple(omit), tuple(paragraphs), notes)


def _feedback_notes(
    emphasize: list[str], omit: list[str], paragraphs: list[str], unapplied: list[str]
) -> tuple[str, ...]:
    notes = [f"feedback: emphasized {', '.join(emphasize)}"] if emphasize else []
    notes += [f"feedback: omitted {', '.join(omit)}"] if omit else []
    notes += ["feedback: added a cover-letter paragraph"] * len(paragraphs)
    return tuple(notes + [f"feedback not applied: {line}" for line in unapplied])


def _split_terms(value: str) -> list[str]:
    return [term.strip() for term in value.split(",") if term.strip()]


def draft_deterministic(posting: Posting, profile: Profile, feedback: str | None = None) -> Draft:
    """A draft built only from the profile's own words, ordered by relevance to `posting`."""
    wishes = parse_feedback(feedback, profile)
    relevance = term_contributions(posting, profile_terms(profile))
    entries = _rank_entries(profile, relevance, wishes)
    draft = Draft(
        posting_key=dedupe_key(posting),
        company=posting.company,
        role=posting.title,
        entries=entries,
        skills=_order_skills(profile, relevance, wishes),
        cover_letter=(),
        drafter=DETERMINISTIC,
        notes=wishes.notes,
    )
    return replace(draft, cover_letter=cover_letter(draft, profile, relevance, wishes))


def bullet_score(bullet: Bullet, relevance: Mapping[str, float], wishes: Feedback) -> float | None:
    """How relevant a bullet is to the posting; None when the feedback omits it."""
    text = f"{bullet.text} {' '.join(bullet.skills)}"
    if any(mentions(term, text) for term in wishes.omit):
        return None
    score = sum(weight for term, weight in relevance.items() if mentions(term, text))
    return score + sum(EMPHASIS_BOOST for term in wishes.emphasize if mentions(term, text))


def _rank_entries(
    profile: Profile, relevance: Mapping[str, float], wishes: Feedback
) -> tuple[DraftEntry, ...]:
    # (score, entry index, bullet index, text); sorting on -score then position is stable.
    chosen: list[tuple[float, int, int, str]] = []
    for e, entry in enumerate(profile.experience):
        scored = [
            (bullet_score(b, relevance, wishes), i, b.text) for i, b in enumerate(entry.bullets)
        ]
        kept = sorted(
            ((s, i, t) for s, i, t in scored if s is not None), key=lambda item: (-item[0], item[1])
        )
        chosen.extend((s, e, i, t) for s, i, t in kept[:MAX_BULLETS_PER_ENTRY])
    chosen.sort(key=lambda item: (-item[0], item[1], item[2]))
    ranked = {(e, i): DraftBullet(t, n, s) for n, (s, e, i, t) in enumerate(chosen, start=1)}
    return tuple(_entry(entry, e, ranked) for e, entry in enumerate(profile.experience))


def _entry(
    entry: Experience, index: int, ranked: Mapping[tuple[int, int], DraftBullet]
) -> DraftEntry:
    bullets = sorted(
        (b for (e, _), b in ranked.items() if e == index), key=lambda bullet: bullet.rank
    )
    return DraftEntry(
        entry.company, entry.title, entry.start, entry.end, entry.location, tuple(bullets)
    )


def _order_skills(
    profile: Profile, relevance: Mapping[str, float], wishes: Feedback
) -> tuple[str, ...]:
    def weight(skill: str) -> float:
        boost = EMPHASIS_BOOST if any(mentions(t, skill) for t in wishes.emphasize) else 0.0
        return boost + sum(
            w for term, w in relevance.items() if term.casefold() == skill.casefold()
        )

    skills = [s for s in profile.all_skills if not any(mentions(t, s) for t in wishes.omit)]
    order = {skill: position for position, skill in enumerate(skills)}
    return tuple(sorted(skills, key=lambda skill: (-weight(skill), order[skill])))


def cover_letter(
    draft: Draft, profile: Profile, relevance: Mapping[str, float], wishes: Feedback
) -> tuple[str, ...]:
    """Opening, requirement terms tied to the best bullets, feedback paragraphs, closing."""
    terms = sorted(relevance, key=lambda term: (-relevance[term], term.casefold()))[:4]
    opening = (
        f"I am writing to apply for the {draft.role} position at {draft.company}. "
        f"{_first_sentence(profile.summary)}"
    )
    closing = (
        f"I would welcome the chance to talk about how I could contribute to "
        f"{draft.company}. My notice period is {profile.answers.notice_period}. "
        "Thank you for considering my application."
    )
    return (opening, _evidence(draft, profile, terms), *wishes.paragraphs, closing)


def _evidence(draft: Draft, profile: Profile, terms: list[str]) -> str:
    if not terms:
        skills = join_words(list(draft.skills[:3]))
        return f"My background in {skills} fits the work your posting describes."
    sentences = [f"Your posting asks for {join_words(terms)}, which is the core of my recent work."]
    used: set[str] = set()
    for bullet, entry in _best_bullets(draft):
        if entry.company in used or len(used) == EVIDENCE_SENTENCES:
            continue
        used.add(entry.company)
        tense = "work" if entry.end.lower() in {"present", "now", ""} else "worked"
        sentences.append(
            f"At {entry.company}, where I {tense} as {entry.title}, "
            f"I {_lower_first(_sentence(bullet.text))}"
        )
    return " ".join(sentences)


def _best_bullets(draft: Draft) -> list[tuple[DraftBullet, DraftEntry]]:
    pairs = [(b, entry) for entry in draft.entries for b in entry.bullets if b.score > 0]
    return sorted(pairs, key=lambda pair: pair[0].rank)


def join_words(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    return match.group(1) if match else flat


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _lower_first(text: str) -> str:
    # "Designed …" reads as "I designed …"; "AWS …" or "OpenTelemetry …" keep their case.
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text
