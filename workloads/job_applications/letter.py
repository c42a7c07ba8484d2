"""The deterministic cover letter: template sentences around whole profile bullets.

Every claim restates one whole bullet (its action, object and figures; only a bracketed
aside is left out), and the bullets told are the ones that fit the posting's requirements
best (posting_requirements): a bullet matching none of them is never told. "Your posting asks
for" names only terms of those requirements. A revise note's emphasis adds a paragraph about
the emphasized terms, backed by a bullet not yet told. letter_checks.letter_problems holds
every letter, this one and the model's, to these rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from workloads.job_applications.boards import Posting
from workloads.job_applications.feedback import Feedback
from workloads.job_applications.letter_checks import (
    CLAIM_ALSO,
    CLAIM_FIRST,
    CLAIM_LISTED,
    TEMPLATES,
    BulletFact,
    LetterFacts,
    bullet_score,
    is_past_verb,
)
from workloads.job_applications.posting_requirements import (
    requirement_posting,
    requirement_text,
)
from workloads.job_applications.profile import Profile
from workloads.job_applications.rank import profile_terms, term_contributions
from workloads.job_applications.sentences import split_sentences
from workloads.job_applications.terms import mentions

__all__ = ["EVIDENCE_SENTENCES", "cover_letter", "join_words", "letter_facts", "restate"]

EVIDENCE_SENTENCES = 3  # bullets told, best first
ASKED_TERMS = 4
TERMS_PER_CLAIM = 3
_ASIDE = re.compile(r"\s*\([^()]*\)")


@dataclass(frozen=True)
class _Told:
    bullet: BulletFact
    score: float


def letter_facts(posting: Posting, profile: Profile, wishes: Feedback,
                 printed: Sequence[str]) -> LetterFacts:
    """What a letter for `posting` may say (see letter_checks)."""
    kept = set(printed)
    bullets = tuple(BulletFact(b.text, b.skills, entry.company, entry.title, b.text in kept,
                               entry.end.casefold() in {"present", "now", "today", ""})
                    for entry in profile.experience for b in entry.bullets)
    words = [profile.summary, profile.answers.notice_period, *profile.all_skills,
             *(f"{e.company} {e.title} {e.start} {e.end} {e.location}"
               for e in profile.experience),
             *(f"{b.text} {' '.join(b.skills)}" for e in profile.experience for b in e.bullets),
             *(f"{d.institution} {d.degree} {d.start} {d.end} {d.details}"
               for d in profile.education)]
    relevance = term_contributions(requirement_posting(posting), profile_terms(profile))
    return LetterFacts(
        role=posting.title, company=posting.company, bullets=bullets,
        profile_text="\n".join(words), summary=profile.summary,
        asked_text=requirement_text(posting), relevance=relevance,
        emphasized=wishes.emphasize, own=wishes.paragraphs,
        notice=profile.answers.notice_period)


def cover_letter(posting: Posting, profile: Profile, wishes: Feedback,
                 printed: Sequence[str]) -> tuple[str, ...]:
    """Opening, what the posting asks for and the bullets that show it, the emphasis asked
    for, the person's own paragraphs, closing. `printed` are the CV's bullet texts."""
    facts = letter_facts(posting, profile, wishes, printed)
    asked = sorted(facts.relevance, key=lambda t: (-facts.relevance[t], t.casefold()))
    told = _best(facts)
    paragraphs = [TEMPLATES["opening"].format(role=facts.role, company=facts.company),
                  _evidence(facts, asked[:ASKED_TERMS], told),
                  *_emphasis(facts, [t.bullet for t in told]),
                  *wishes.paragraphs, _closing(facts)]
    return _without_repeats(paragraphs)


def _best(facts: LetterFacts) -> list[_Told]:
    """The printed bullets that fit the requirements best (profile order among equals)."""
    scored = [_Told(b, bullet_score(b, facts.relevance)) for b in facts.bullets if b.printed]
    fitting = sorted((t for t in scored if t.score > 0), key=lambda t: -t.score)
    return fitting[:EVIDENCE_SENTENCES]


def _evidence(facts: LetterFacts, asked: list[str], told: list[_Told]) -> str:
    by_weight = sorted(facts.relevance, key=lambda t: (-facts.relevance[t], t.casefold()))
    sentences = [TEMPLATES["asks"].format(asked=join_words(asked))] if asked else []
    if not told:
        sentences.append(TEMPLATES["no_match"].format(role=facts.role, company=facts.company))
    companies: list[str] = []
    for item in told:
        sentences.append(_claim(item.bullet, item.bullet.company in companies, by_weight))
        companies.append(item.bullet.company)
    return " ".join(sentences)


def _claim(bullet: BulletFact, again: bool, terms: Sequence[str]) -> str:
    """One sentence restating one whole bullet: the terms it answers, where, what was done."""
    tense = "work" if bullet.current else "worked"
    said = restate(bullet.text)
    first = said.split()[0] if said.split() else ""
    named = join_words([t for t in terms if mentions(t, f"{bullet.text} {' '.join(bullet.skills)}")
                        ][:TERMS_PER_CLAIM])
    if not is_past_verb(first):
        return CLAIM_LISTED.format(terms=named, company=bullet.company, tense=tense,
                                   title=bullet.title, bullet=said)
    if again:
        return CLAIM_ALSO.format(terms=named, company=bullet.company, bullet=_lower_first(said))
    return CLAIM_FIRST.format(terms=named, company=bullet.company, tense=tense,
                              title=bullet.title, bullet=_lower_first(said))


def restate(text: str) -> str:
    """A bullet as the body of one sentence: whole, only a bracketed aside left out, and its
    own sentences joined by semicolons ("Cut costs. Led a team" → "Cut costs; led a team")."""
    bare = " ".join(_ASIDE.sub("", text).split())
    parts = [part.rstrip(".!? ") for part in split_sentences(bare)]
    return "; ".join(p if n == 0 else _lower_first(p) for n, p in enumerate(parts) if p)


def _emphasis(facts: LetterFacts, told: list[BulletFact]) -> tuple[str, ...]:
    """The paragraph a revise note's emphasis asks for, backed by a bullet not yet told."""
    wanted = list(facts.emphasized)
    if not wanted:
        return ()

    def naming(bullet: BulletFact) -> int:
        text = f"{bullet.text} {' '.join(bullet.skills)}"
        return sum(1 for term in wanted if mentions(term, text))

    fresh = sorted((b for b in facts.bullets if b.printed and naming(b) and b not in told),
                   key=lambda b: -naming(b))
    if not fresh:
        return (TEMPLATES["emphasis_listed"].format(role=facts.role, wanted=join_words(wanted)),)
    opening = TEMPLATES["emphasis"].format(role=facts.role, wanted=join_words(wanted))
    again = fresh[0].company in [b.company for b in told]
    return (f"{opening} {_claim(fresh[0], again, wanted)}",)


def _closing(facts: LetterFacts) -> str:
    if facts.notice:
        return TEMPLATES["closing_notice"].format(role=facts.role, company=facts.company,
                                                  notice=facts.notice)
    return TEMPLATES["closing"].format(role=facts.role, company=facts.company)


def _without_repeats(paragraphs: Sequence[str]) -> tuple[str, ...]:
    """The paragraphs with any sentence said before left out (a note may repeat the letter)."""
    seen: set[str] = set()
    kept: list[str] = []
    for paragraph in paragraphs:
        fresh = []
        for sentence in split_sentences(paragraph):
            key = " ".join(re.findall(r"\w+", sentence.casefold()))
            if key not in seen:
                seen.add(key)
                fresh.append(sentence)
        if fresh:
            kept.append(" ".join(fresh))
    return tuple(kept)


def join_words(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def _lower_first(text: str) -> str:
    # "Designed …" reads as "I designed …"; "AWS …" or "OpenTelemetry …" keep their case.
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text
