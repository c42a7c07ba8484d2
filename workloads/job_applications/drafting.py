"""What to say for one posting: CV bullets and skills in relevance order, and a cover letter.

The deterministic drafter never invents facts: it only chooses and orders the profile's own
bullets and skills; the cover letter (letter.py) is written in whole sentences around them.

A human's revise note is read by feedback.parse_feedback; emphasized terms go first in the
CV, are named under its summary, and get a paragraph of their own in the cover letter.
Every directive applied (or not) is recorded in `Draft.notes`, so the effect is visible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from workloads.job_applications.boards import Posting
from workloads.job_applications.feedback import Feedback, parse_feedback
from workloads.job_applications.letter import cover_letter
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
    highlights: tuple[str, ...] = ()  # terms a revise note asked to emphasize (in the profile)

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
        highlights=wishes.emphasize,
    )
    kept = [b.text for entry in entries for b in entry.bullets]
    letter = cover_letter(posting, profile, wishes, kept)
    return replace(draft, cover_letter=letter)


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
