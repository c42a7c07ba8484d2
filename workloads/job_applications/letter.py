"""The deterministic cover letter: whole sentences around the profile's own facts.

The letter never pastes a CV bullet: it names what the candidate did in a few words (the
bullet's opening, up to its first clause) and the skills the work drew on. The evidence
paragraph always tells the bullets that fit the posting best (by the posting's terms alone),
so a revise note's emphasis adds a paragraph about the emphasized terms without pushing the
strongest match out. letter_checks.letter_problems holds every letter to this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workloads.job_applications.feedback import Feedback
from workloads.job_applications.letter_checks import has_finite_verb
from workloads.job_applications.profile import Bullet, Experience, Profile
from workloads.job_applications.sentences import split_sentences
from workloads.job_applications.terms import mentions

__all__ = ["bullet_head", "cover_letter", "join_words", "summary_sentence"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


EVIDENCE_SENTENCES = 2
HEAD_WORDS = 7  # below letter_checks.REPEAT_WORDS: a reference to the bullet, not a copy
SKILLS_PER_SENTENCE = 3
# A bullet's opening ends before these words (a new clause or a detail) ...
_CLAUSE_WORDS = _set("""that which who to from with by while across for using and
    including via into""")
# ... and never ends on these.
_DANGLING = _set("a an the of in on at to for from with by and or as its their our")
_IRREGULAR_PAST = _set("""built led ran wrote made took grew cut set kept brought taught
    began drove won sold held put met paid found spun rewrote rebuilt oversaw undertook upheld
    shipped""")
_NUMBER_WORDS = _set("""one two three four five six seven eight nine ten eleven twelve
    fifteen twenty""")


@dataclass(frozen=True)
class _Match:
    """One CV bullet, its job, and how well it fits the posting (the posting's terms only)."""

    bullet: Bullet
    entry: Experience
    score: float


def cover_letter(role: str, company: str, profile: Profile, relevance: Mapping[str, float],
                 wishes: Feedback, kept: Sequence[str], skills: Sequence[str]
                 ) -> tuple[str, ...]:
    """Opening, the best matches to the posting, the emphasis asked for, notes, closing.

    `kept` are the texts of the bullets the CV prints (omitted ones are never told)."""
    matches = _matches(profile, relevance, kept)
    terms = sorted(relevance, key=lambda term: (-relevance[term], term.casefold()))[:4]
    evidence, told = _evidence(matches, terms, skills)
    paragraphs = [_opening(role, company, profile), evidence,
                  *_emphasis(matches, wishes.emphasize, told, relevance),
                  *wishes.paragraphs, _closing(company, profile)]
    return _without_repeats(paragraphs)


def _opening(role: str, company: str, profile: Profile) -> str:
    summary = summary_sentence(profile.summary)
    return f"I am writing to apply for the {role} position at {company}." + (
        f" {summary}" if summary else "")


def _closing(company: str, profile: Profile) -> str:
    notice = profile.answers.notice_period
    return (f"I would welcome the chance to talk about how I could contribute to {company}. "
            + (f"My notice period is {notice}. " if notice else "")
            + "Thank you for considering my application; I look forward to hearing from you.")


def summary_sentence(summary: str) -> str:
    """The summary's first sentence as a sentence of the letter: "Backend engineer with nine
    years of experience." (no verb) becomes "I am a backend engineer with nine years of
    experience."; one that has a verb stays as written."""
    first = next(iter(split_sentences(" ".join(summary.split()))), "")
    if not first or has_finite_verb(first):
        return _sentence(first) if first else ""
    body = re.sub(r"^(?:a|an|the)\s+", "", first.rstrip(".!?;: "), flags=re.I)
    if not body:
        return ""
    if body[0].isdigit() or body.split()[0].casefold() in _NUMBER_WORDS:
        return f"I bring {_lower_first(body)}."
    article = "an" if body[0].casefold() in "aeiou" else "a"
    return f"I am {article} {_lower_first(body)}."


def _matches(profile: Profile, relevance: Mapping[str, float], kept: Sequence[str]
             ) -> list[_Match]:
    printed = set(kept)
    found = [
        _Match(b, entry, sum(w for term, w in relevance.items()
                             if mentions(term, f"{b.text} {' '.join(b.skills)}")))
        for entry in profile.experience for b in entry.bullets if b.text in printed
    ]
    return sorted(found, key=lambda m: -m.score)  # stable: profile order among equals


def _evidence(matches: list[_Match], terms: list[str], skills: Sequence[str]
              ) -> tuple[str, list[_Match]]:
    fitting = [m for m in matches if m.score > 0]
    if not terms or not fitting:
        return (f"My background in {join_words(list(skills[:3]))} is a good match for the "
                "work your posting describes."), []
    told: list[_Match] = []
    for match in fitting:
        if len(told) < EVIDENCE_SENTENCES and match.entry not in [t.entry for t in told]:
            told.append(match)
    sentences = [f"Your posting asks for {join_words(terms)}, which is the core of my recent "
                 "work."]
    sentences += [_tell(match, terms, introduced=False) for match in told]
    return " ".join(sentences), told


def _emphasis(matches: list[_Match], wanted: tuple[str, ...], told: list[_Match],
              relevance: Mapping[str, float]) -> tuple[str, ...]:
    """The paragraph a revise note's emphasis asks for, backed by a bullet not yet told."""
    if not wanted:
        return ()
    opening = f"I would especially like to point to my work with {join_words(list(wanted))}"

    def naming(match: _Match) -> int:
        text = f"{match.bullet.text} {' '.join(match.bullet.skills)}"
        return sum(1 for term in wanted if mentions(term, text))

    fresh = sorted((m for m in matches if naming(m) and m not in told),
                   key=lambda m: (-naming(m), -m.score))
    if fresh:
        introduced = fresh[0].entry in [t.entry for t in told]
        return (f"{opening}. {_tell(fresh[0], [*wanted, *relevance], introduced)}",)
    already = next((m for m in told if naming(m)), None)
    if already is not None:
        return (f"{opening}, which is at the heart of the work at {already.entry.company} "
                "described above.",)
    return (f"{opening}, which my CV lists among my skills.",)


def _tell(match: _Match, first: Sequence[str], introduced: bool) -> str:
    """One sentence about one bullet: where, what (its opening), and the skills it drew on."""
    entry = match.entry
    head = bullet_head(match.bullet.text)
    skills = _skills_for(match.bullet, head, first)
    drew = f", work that drew on {join_words(skills)}" if skills else ""
    if introduced:
        where = f"Also at {entry.company}"
    else:
        tense = "work" if entry.end.casefold() in {"present", "now", ""} else "worked"
        where = f"At {entry.company}, where I {tense} as {entry.title}"
    if _starts_with_past_verb(head):
        return f"{where}, I {_lower_first(head)}{drew}."
    topics = join_words(skills or list(match.bullet.skills[:SKILLS_PER_SENTENCE]))
    return f"{where}, my work covered {topics or 'what my CV lists there'}."


def _skills_for(bullet: Bullet, head: str, first: Sequence[str]) -> list[str]:
    """The bullet's skills not already named in `head`, those in `first` leading."""
    order = {term.casefold(): n for n, term in enumerate(first)}
    fresh = [s for s in bullet.skills if not mentions(s, head)]
    fresh.sort(key=lambda s: order.get(s.casefold(), len(order)))
    return fresh[:SKILLS_PER_SENTENCE]


def bullet_head(text: str) -> str:
    """What a bullet says it did, in a few words: its opening up to the first clause or detail.

    "Designed a PostgreSQL-backed job queue (SKIP LOCKED, …) that runs …" → "Designed a
    PostgreSQL-backed job queue"."""
    words: list[str] = []
    for word in text.split():
        if len(words) >= 3 and (word.casefold() in _CLAUSE_WORDS or word[0] in "(—–-"):
            break
        words.append(word)
        if len(words) >= 3 and word[-1] in ",;:":
            break
        if len(words) == HEAD_WORDS:
            break
    while len(words) > 1 and words[-1].casefold().strip(",;:.") in _DANGLING:
        words.pop()
    return " ".join(words).rstrip(",;:.")


def _starts_with_past_verb(head: str) -> bool:
    first = head.split()[0].casefold() if head.split() else ""
    return first.endswith("ed") or first in _IRREGULAR_PAST


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


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _lower_first(text: str) -> str:
    # "Designed …" reads as "I designed …"; "AWS …" or "OpenTelemetry …" keep their case.
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text
