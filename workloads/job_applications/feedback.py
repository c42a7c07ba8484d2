"""A person's revise note read into drafting directives (see drafting.py for their effect).

Lines, case-insensitively:

- `emphasize: Kafka, Go` (or `focus:`, or the words without a colon: "emphasise HIPAA and
  PostgreSQL"): the terms the profile has go first in the CV and get their own sentence in
  the letter; a term the profile never mentions is reported as not applied (the drafter does
  not claim experience the candidate did not list).
- `omit: PHP` (or `drop:`): bullets and skills mentioning these terms are left out.
- `paragraph: Some text.`: the text is added to the cover letter, before the closing paragraph.
- any other line: profile terms it mentions are emphasized ("more about Kafka please"); a line
  naming no profile term is listed as not applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workloads.job_applications.profile import Profile
from workloads.job_applications.rank import profile_terms
from workloads.job_applications.terms import mentions

__all__ = ["Feedback", "parse_feedback"]

_EMPHASIZE_KEYS = {"emphasize", "emphasise", "focus", "highlight"}
_OMIT_KEYS = {"omit", "drop"}
_EMPHASIZE_WORDS = re.compile(r"^\s*(emphasi[sz]e|focus on|focus|highlight)\s+(.+)$", re.I)


@dataclass(frozen=True)
class Feedback:
    emphasize: tuple[str, ...] = ()  # only terms the profile mentions
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
        key, sep, value = (part.strip() for part in line.partition(":"))
        worded = None if sep else _EMPHASIZE_WORDS.match(line)
        if (key.lower() in _EMPHASIZE_KEYS and value) or worded:
            terms = _split_terms(worded.group(2) if worded else value)
            emphasize.extend(t for t in terms if _in_profile(t, profile))
            unapplied.extend(f"{t} is not in the profile" for t in terms
                             if not _in_profile(t, profile))
        elif key.lower() in _OMIT_KEYS and value:
            omit.extend(_split_terms(value))
        elif key.lower() == "paragraph" and value:
            paragraphs.append(value)
        else:
            named = [term for term in known if mentions(term, line)]
            emphasize.extend(named)
            unapplied.extend([] if named else [line.strip()])
    emphasize = list(dict.fromkeys(emphasize))
    notes = _feedback_notes(emphasize, omit, paragraphs, unapplied)
    return Feedback(tuple(emphasize), tuple(omit), tuple(paragraphs), notes)


def _in_profile(term: str, profile: Profile) -> bool:
    """Whether the candidate lists `term`: a skill, a bullet's tag or words, or the summary."""
    texts = [profile.summary, *profile_terms(profile),
             *(b.text for e in profile.experience for b in e.bullets)]
    return any(mentions(term, text) for text in texts)


def _feedback_notes(
    emphasize: list[str], omit: list[str], paragraphs: list[str], unapplied: list[str]
) -> tuple[str, ...]:
    notes = [f"feedback: emphasized {', '.join(emphasize)}"] if emphasize else []
    notes += [f"feedback: omitted {', '.join(omit)}"] if omit else []
    notes += ["feedback: added a cover-letter paragraph"] * len(paragraphs)
    return tuple(notes + [f"feedback not applied: {line}" for line in unapplied])


def _split_terms(value: str) -> list[str]:
    parts = re.split(r",|;|\band\b", value.rstrip(". "))
    return [term.strip() for term in parts if term.strip()]
