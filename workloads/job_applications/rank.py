"""Hard-requirement filter and relevance ranking of postings against the candidate profile."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from workloads.job_applications.boards import Posting
from workloads.job_applications.hard_requirements import requirement_reasons
from workloads.job_applications.profile import Profile, Requirements
from workloads.job_applications.terms import count_term, mentions

__all__ = [
    "Ranked",
    "Rejection",
    "dedupe_key",
    "filter_postings",
    "profile_terms",
    "rank",
    "score_posting",
    "seniority_of",
    "term_contributions",
]

TITLE_WEIGHT = 3.0  # a skill named in the title says more than one in the body
HALF_SCORE = 6.0  # the raw score that maps to 50 of 100
TOP_TERMS = 5

# Checked from the highest level down, so "Senior Staff Engineer" is staff.
_SENIORITY_PATTERNS = (
    ("director", r"\b(director|head of|vp|vice president)\b"),
    ("principal", r"\bprincipal\b"),
    ("staff", r"\bstaff\b"),
    ("lead", r"\b(lead|leader)\b"),
    ("senior", r"\b(senior|sr)\b"),
    ("intern", r"\b(intern|internship|working student|werkstudent)\b"),
    ("junior", r"\b(junior|jr|entry[- ]level|graduate|new grad)\b"),
)


@dataclass(frozen=True)
class Rejection:
    posting: Posting
    reasons: tuple[str, ...]  # e.g. "location: Berlin not accepted", "seniority: principal"

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


@dataclass(frozen=True)
class Ranked:
    posting: Posting
    score: int  # 0-100
    top_terms: tuple[str, ...]  # the profile terms that contributed most, best first
    key: str  # dedupe_key(posting)


def dedupe_key(posting: Posting) -> str:
    """A key stable across fetches of the same posting, e.g. `greenhouse:acme:4012345`."""
    return f"{posting.source}:{posting.board}:{posting.external_id}"


def seniority_of(title: str) -> str:
    """The seniority level a job title implies; "mid" when it names none."""
    lowered = title.lower()
    for level, pattern in _SENIORITY_PATTERNS:
        if re.search(pattern, lowered):
            return level
    return "mid"


def filter_postings(
    postings: Iterable[Posting], profile: Profile
) -> tuple[list[Posting], list[Rejection]]:
    """Split postings into those meeting every hard requirement and those rejected, with why."""
    kept: list[Posting] = []
    rejected: list[Rejection] = []
    for posting in postings:
        reasons = rejection_reasons(posting, profile.requirements) + tuple(requirement_reasons(
            posting, profile.requirements, profile.answers.sponsorship_required))
        if reasons:
            rejected.append(Rejection(posting, reasons))
        else:
            kept.append(posting)
    return kept, rejected


def rejection_reasons(posting: Posting, req: Requirements) -> tuple[str, ...]:
    """Every hard requirement `posting` fails; empty when it passes."""
    reasons = []
    if any(posting.company.casefold() == c.casefold() for c in req.excluded_companies):
        reasons.append(f"excluded company: {posting.company}")
    location = _location_reason(posting, req)
    if location:
        reasons.append(location)
    level = seniority_of(posting.title)
    if req.seniority and level not in req.seniority:
        reasons.append(f"seniority: {level}")
    text = f"{posting.title}\n{posting.text}"
    reasons.extend(f"excluded keyword: {kw}" for kw in req.excluded_keywords if mentions(kw, text))
    return tuple(reasons)


def _location_reason(posting: Posting, req: Requirements) -> str | None:
    where = posting.location or "unknown location"
    if req.remote_only and not posting.remote:
        return f"location: {where} is not remote"
    if not req.accepted_locations:
        return None
    for accepted in req.accepted_locations:
        if accepted.casefold() == "remote" and posting.remote:
            return None
        if mentions(accepted, posting.location):
            return None
    return f"location: {where} not accepted"


def profile_terms(profile: Profile) -> dict[str, float]:
    """Each skill or bullet tag with a weight: listed skills 1, plus 0.5 per bullet using it."""
    weights: dict[str, float] = {}
    display: dict[str, str] = {}
    for term in profile.all_skills:
        display.setdefault(term.casefold(), term)
        weights[term.casefold()] = 1.0
    for entry in profile.experience:
        for bullet in entry.bullets:
            for tag in bullet.skills:
                display.setdefault(tag.casefold(), tag)
                weights[tag.casefold()] = min(3.0, weights.get(tag.casefold(), 0.5) + 0.5)
    return {display[key]: weight for key, weight in weights.items()}


def term_contributions(posting: Posting, terms: Mapping[str, float]) -> dict[str, float]:
    """How much each matching term adds to the raw score; terms that do not match are left out.

    A title match adds TITLE_WEIGHT; body matches add log(1 + count), so a term repeated ten
    times does not drown out five different ones.
    """
    contributions = {}
    for term, weight in terms.items():
        in_title = TITLE_WEIGHT if mentions(term, posting.title) else 0.0
        in_body = math.log1p(count_term(term, posting.text))
        if in_title or in_body:
            contributions[term] = weight * (in_title + in_body)
    return contributions


def score_posting(posting: Posting, profile: Profile) -> Ranked:
    """The 0-100 relevance of `posting` with the terms behind it."""
    contributions = term_contributions(posting, profile_terms(profile))
    raw = sum(contributions.values())
    best = sorted(contributions, key=lambda term: (-contributions[term], term.casefold()))
    score = round(100 * raw / (raw + HALF_SCORE))
    return Ranked(posting, score, tuple(best[:TOP_TERMS]), dedupe_key(posting))


def rank(postings: Iterable[Posting], profile: Profile, top: int = 15) -> list[Ranked]:
    """The `top` best-scoring postings, best first; ties ordered by dedupe key for stability."""
    scored = [score_posting(posting, profile) for posting in postings]
    scored.sort(key=lambda r: (-r.score, r.key))
    return scored[:top]
