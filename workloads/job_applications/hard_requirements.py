"""The hard requirements read from a posting's words and pay: authorization, sponsorship,
clearance, degree, languages, student-only roles, remote regions and minimum salary.

Each check returns one reason string or None; a requirement the profile leaves unset is
never checked. The reasons are stable per profile ("language: French required"), so the
scrape report can count them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from workloads.job_applications.boards import Posting
from workloads.job_applications.language_levels import LANGUAGES, level_label, level_phrases
from workloads.job_applications.places import (
    authorized_for,
    country_of,
    place_names,
    same_place,
)
from workloads.job_applications.posting_requirements import listed_requirements
from workloads.job_applications.profile import DEGREE_LEVELS, Requirements
from workloads.job_applications.sentences import split_sentences
from workloads.job_applications.terms import mentions, term_pattern

__all__ = ["requirement_reasons", "unclear_authorization"]

_SOFT = re.compile(r"\b(preferred|a plus|nice to have|bonus|advantage|ideally)\b", re.I)
_NO_SPONSOR = re.compile(
    r"\b(no|not|unable to|cannot|can ?not|can't|do not|don't|does not|doesn't|will not|won't)"
    r"\s+(\w+\s+){0,2}(visa\s+)?sponsor"
    r"|\bsponsorship (is |will )?(not|un)(available| available| offered| provided)", re.I)
_AUTHORIZED = re.compile(
    r"\b(?:authori[sz]ed|eligible|permitted|legally able|right) to work in (?:the )?"
    r"((?:[A-Z][\w/-]*|of)(?: (?:[A-Z][\w/-]*|of))*|U\.S\.|U\.K\.)"
    r"|\b([A-Z][\w-]*(?: [A-Z][\w-]*)?|U\.S\.|U\.K\.) citizens(?:hip)? "
    r"(?:only|required|is required)")
# "Brazilian work authorization required", "a valid UK work permit", "US citizenship", "work
# authorization for the EU/EEA": any place of places.place_names (regions, countries, their
# adjectives, the profile's own places) before or after the right. Counted only where the
# sentence demands it.
_RIGHT = (r"(?:work\s+(?:authori[sz]ation|permit|visa|eligibility)|right\s+to\s+work|"
          r"citizen(?:ship|s)?|passport)")
_ABOUT_AUTHORIZATION = re.compile(
    r"\bwork\s+(?:authori[sz]ation|permit|visa|eligibility)\b|\bright\s+to\s+work\b|"
    r"\b(?:authori[sz]ed|eligible|permitted|legally able)\s+to\s+work\b|"
    r"\bcitizen(?:ship|s)?\b", re.I)


def _place_alternation(extra: tuple[str, ...]) -> str:
    # Short names ("US", "UK") only in capitals: "us" is a pronoun.
    return "|".join(re.escape(n) if len(n) > 3 else f"(?-i:{re.escape(n)})"
                    for n in place_names(extra))


@lru_cache(maxsize=32)
def _place_authorized(extra: tuple[str, ...]) -> re.Pattern[str]:
    places = _place_alternation(extra)
    return re.compile(
        rf"(?<![\w.])({places})\s+{_RIGHT}\b"
        rf"|\b(?:work\s+(?:authori[sz]ation|permit)|right\s+to\s+work)\s+(?:for|in|within)\s+"
        rf"(?:the\s+)?({places})(?![\w/])", re.I)


_DEMANDED = re.compile(r"\b(required|require[sd]?|must|need(ed)?|mandatory|only|valid|hold)\b",
                       re.I)
_OFFERED = re.compile(r"\b(sponsor\w*|support\w*|assist\w*|help\w*|relocation)\b", re.I)
_CLEARANCE = re.compile(
    r"\b(security clearance|(active|current|eligible for) (secret|top secret|ts|sc|dv)\b"
    r"|ts/sci|clearance (is )?required|sc clearance|dv clearance|sicherheitsüberprüfung)", re.I)
# Each level's usual spellings; the bare two-letter forms count only in capitals and before
# "in", "degree", "or" or "/", so "MS Office" or "BA flights" are not degrees.
_DEGREES = (
    ("bachelor", re.compile(
        r"\b(?:bachelor(?:['’]?s)?|b\.\s?(?:sc|s|a|eng|tech)\.?|bsc|beng|undergraduate degree)"
        r"(?!\w)|(?-i:\b(?:BA|BS)\b)(?=\s+(?:in|degree|or)\b|/)", re.I)),
    ("master", re.compile(
        r"\b(?:master(?:['’]?s\b| degree\b| of\b)|m\.\s?(?:sc|s|a|eng|tech)\.?|msc|meng|mba|"
        r"diplom\w*|(?:advanced|graduate) degree)(?!\w)"
        r"|(?-i:\b(?:MA|MS)\b)(?=\s+(?:in|degree|or)\b|/)",
        re.I)),
    ("phd", re.compile(r"\b(?:ph\.?\s?d\.?|doctorate|doctoral|doctor of philosophy)(?!\w)",
                       re.I)),
)
# A degree of no named level; "a high degree of ownership" is none.
_ANY_DEGREE = re.compile(r"\b(?:university|college|academic|technical)\s+degree\b"
                         r"|\bdegree\s+in\s+\w", re.I)
_REQUIRED = re.compile(r"\b(required|require[sd]?|must|need(ed)?|mandatory|minimum)\b", re.I)
_OR_EXPERIENCE = re.compile(r"\bor (equivalent|comparable) (practical |work )?experience\b", re.I)
_STUDENT = re.compile(r"\b(currently enrolled|must be (a |an )?(enrolled )?student|"
                      r"enrolled (student|in an? (degree|university|bachelor|master))|"
                      r"working student|werkstudent|student (job|position) only)\b", re.I)
_REMOTE_PLACE = re.compile(r"^\s*remote\s*[-–:(/,]\s*([^()]+?)\s*\)?\s*$"
                           r"|^\s*([^()]+?)\s*[-–(/,]\s*remote\s*\)?\s*$", re.I)
_REMOTE_TEXT = re.compile(
    r"\b(?i:remote)\b[^.\n]{0,40}?(?:\b(?:only in|within|based in|located in)\s+(?:the )?"
    r"([A-Z][\w-]*(?: [A-Z][\w-]*)?)|\b([A-Z]{2,3}|[A-Z][a-z]+)[- ]only\b)")
def requirement_reasons(posting: Posting, req: Requirements,
                        sponsorship_required: bool | None) -> list[str]:
    """Every one of these requirements `posting` fails (the caller adds the older ones)."""
    sentences = split_sentences(posting.text, clauses=True)
    listed = listed_requirements(posting.text)
    sponsorship = _sponsorship(sentences, sponsorship_required)
    checks: list[Callable[[], str | None]] = [
        lambda: _clearance(posting, req.security_clearance),
        lambda: _degree(sentences, req.degree, listed),
        lambda: _student(posting, req.student),
        lambda: _remote(posting, req.remote_regions),
        lambda: _salary(posting, req.min_salary, req.salary_currency),
    ]
    # Every reason that applies, not only the first: the report counts each.
    reasons = [reason for check in checks if (reason := check())]
    return ([sponsorship] if sponsorship else []) + _authorization(
        sentences, req.authorized_in, listed) + reasons + _languages(sentences, req)


def _sponsorship(sentences: list[str], needed: bool | None) -> str | None:
    if needed and any(_NO_SPONSOR.search(s) for s in sentences):
        return "sponsorship: not offered"
    return None


def _listed(sentence: str, listed: list[str]) -> bool:
    """Whether `sentence` stands in the posting's list of requirements."""
    return any(line in sentence or sentence in line for line in listed)


def _authorization(sentences: list[str], allowed: tuple[str, ...],
                   listed: Sequence[str]) -> list[str]:
    """A reason for every place the posting demands a right to work in that `allowed` lacks."""
    if not allowed:
        return []
    reasons: list[str] = []
    for sentence in sentences:
        for place in _required_places(sentence, allowed, listed):
            reason = f"work authorization: {place}"
            if not authorized_for(place, allowed) and reason not in reasons:
                reasons.append(reason)
    return reasons


def _demanded(sentence: str, listed: Sequence[str]) -> bool:
    """Said as a must ("required", "valid", "only") or listed under "Requirements", and not
    something the company offers or a plus."""
    said = _DEMANDED.search(sentence) or any(line in sentence or sentence in line
                                              for line in listed)
    return bool(said) and not _SOFT.search(sentence) and not _OFFERED.search(sentence)


def _required_places(sentence: str, allowed: tuple[str, ...], listed: Sequence[str]
                     ) -> list[str]:
    """The places `sentence` demands a right to work in."""
    places = [(m.group(1) or m.group(2) or "").strip() for m in _AUTHORIZED.finditer(sentence)]
    if _demanded(sentence, listed):
        places += [m.group(1) or m.group(2)
                   for m in _place_authorized(allowed).finditer(sentence)]
    return [country_of(place) for place in places if place]


def unclear_authorization(posting: Posting, req: Requirements) -> list[str]:
    """The lines that demand a right to work without a place this workload recognises
    ("local work authorization is required"): the posting is kept, and the review names them."""
    if not req.authorized_in:
        return []
    listed = listed_requirements(posting.text)
    return [sentence for sentence in split_sentences(posting.text, clauses=True)
            if _ABOUT_AUTHORIZATION.search(sentence) and _demanded(sentence, listed)
            and not _required_places(sentence, req.authorized_in, listed)]


def _clearance(posting: Posting, holds: bool | None) -> str | None:
    if holds is False and _CLEARANCE.search(f"{posting.title}\n{posting.text}"):
        return "security clearance: required"
    return None


def _degree(sentences: list[str], holds: str | None, listed: Sequence[str]) -> str | None:
    if holds is None:
        return None
    have = DEGREE_LEVELS.index(holds)
    for sentence in sentences:
        required = _REQUIRED.search(sentence) or any(line in sentence or sentence in line
                                                     for line in listed)
        if not required or _SOFT.search(sentence) or _OR_EXPERIENCE.search(sentence):
            continue
        # The lowest level named: "an MSc or PhD is required" is met by an MSc; a degree
        # of no named level ("a university degree") is a bachelor's.
        named = [level for level, pattern in _DEGREES if pattern.search(sentence)]
        named = named or (["bachelor"] if _ANY_DEGREE.search(sentence) else [])
        if named and DEGREE_LEVELS.index(named[0]) > have:
            return f"degree: {named[0]} required"
    return None


def _languages(sentences: list[str], req: Requirements) -> list[str]:
    if not req.languages:
        return []
    reasons: list[str] = []
    for sentence in sentences:
        levels = level_phrases(sentence)
        if not levels or _SOFT.search(sentence):
            continue
        for lang in LANGUAGES:
            found = term_pattern(lang).search(sentence)
            if found is None:
                continue
            reason = _language_reason(lang, _nearest_level(levels, found), req)
            if reason and reason not in reasons:
                reasons.append(reason)
    return reasons


def _nearest_level(levels: list[tuple[int, int, int]], found: re.Match[str]) -> int:
    """The level named nearest the language: "fluent English and German at B2"."""
    return min(levels, key=lambda lv: max(lv[0] - found.end(), found.start() - lv[1]))[2]


def _language_reason(lang: str, needed: int, req: Requirements) -> str | None:
    if not any(mentions(lang, spoken) for spoken in req.languages):
        return f"language: {lang} required"
    held = [level for name, level in req.language_levels if mentions(lang, name)]
    if held and max(held) < needed:  # a language listed without a level meets any level
        return f"language: {lang} {level_label(needed)} required"
    return None


def _student(posting: Posting, is_student: bool | None) -> str | None:
    if is_student is False and _STUDENT.search(f"{posting.title}\n{posting.text}"):
        return "student: enrollment required"
    return None


def _remote(posting: Posting, regions: tuple[str, ...]) -> str | None:
    if not regions or not posting.remote:
        return None
    where = _REMOTE_PLACE.match(posting.location)
    text = _REMOTE_TEXT.search(posting.text)
    place = (where and (where.group(1) or where.group(2))) or \
        (text and (text.group(1) or text.group(2))) or ""
    if place.strip() and not same_place(place.strip(), regions):
        return f"remote: restricted to {place.strip()}"
    return None


def _salary(posting: Posting, minimum: int | None, currency: str) -> str | None:
    if minimum is None or posting.pay_max is None:
        return None
    if posting.pay_currency.upper() != currency.upper():
        return None  # another currency: no exchange rates here, so no verdict
    if posting.pay_max < minimum:
        return f"salary: below {minimum} {currency.upper()}"
    return None
