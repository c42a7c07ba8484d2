"""The hard requirements read from a posting's words and pay: authorization, sponsorship,
clearance, degree, languages, student-only roles, remote regions and minimum salary.

Each check returns one reason string or None; a requirement the profile leaves unset is
never checked. The reasons are stable per profile ("language: French required"), so the
scrape report can count them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workloads.job_applications.boards import Posting
from workloads.job_applications.profile import DEGREE_LEVELS, Requirements
from workloads.job_applications.terms import mentions

__all__ = ["requirement_reasons"]

_SENTENCES = re.compile(r"(?<=[.!?;•])\s+|\n+")
_SOFT = re.compile(r"\b(preferred|a plus|nice to have|bonus|advantage|ideally)\b", re.I)
_NO_SPONSOR = re.compile(
    r"\b(no|not|unable to|cannot|can ?not|can't|do not|don't|does not|doesn't|will not|won't)"
    r"\s+(\w+\s+){0,2}(visa\s+)?sponsor"
    r"|\bsponsorship (is |will )?(not|un)(available| available| offered| provided)", re.I)
_AUTHORIZED = re.compile(
    r"\b(?:authori[sz]ed|eligible|permitted|legally able|right) to work in (?:the )?"
    r"((?:[A-Z][\w-]*|of)(?: (?:[A-Z][\w-]*|of))*)"
    r"|\b([A-Z][\w-]*(?: [A-Z][\w-]*)?) citizens(?:hip)? (?:only|required|is required)")
_CLEARANCE = re.compile(
    r"\b(security clearance|(active|current|eligible for) (secret|top secret|ts|sc|dv)\b"
    r"|ts/sci|clearance (is )?required|sc clearance|dv clearance|sicherheitsüberprüfung)", re.I)
_DEGREES = (("phd", r"\b(ph\.? ?d|doctorate|doctoral)\b"),
            ("master", r"\b(master'?s?|m\.? ?sc|msc|m\.s\.)\b"),
            ("bachelor", r"\b(bachelor'?s?|b\.? ?sc|bsc|b\.s\.|undergraduate degree)\b"))
_REQUIRED = re.compile(r"\b(required|require[sd]?|must|need(ed)?|mandatory|minimum)\b", re.I)
_OR_EXPERIENCE = re.compile(r"\bor (equivalent|comparable) (practical |work )?experience\b", re.I)
LANGUAGES = ("English", "German", "French", "Spanish", "Italian", "Portuguese", "Dutch",
             "Swedish", "Norwegian", "Danish", "Finnish", "Polish", "Czech", "Russian",
             "Turkish", "Arabic", "Hebrew", "Japanese", "Mandarin", "Chinese", "Korean", "Hindi")
_FLUENT = re.compile(r"\b(fluent|fluency|native|proficien(t|cy)|business[- ]level|c1|c2|"
                     r"professional working)\b", re.I)
_STUDENT = re.compile(r"\b(currently enrolled|must be (a |an )?(enrolled )?student|"
                      r"enrolled (student|in an? (degree|university|bachelor|master))|"
                      r"working student|werkstudent|student (job|position) only)\b", re.I)
_REMOTE_PLACE = re.compile(r"^\s*remote\s*[-–:(/,]\s*([^()]+?)\s*\)?\s*$"
                           r"|^\s*([^()]+?)\s*[-–(/,]\s*remote\s*\)?\s*$", re.I)
_REMOTE_TEXT = re.compile(
    r"\b(?i:remote)\b[^.\n]{0,40}?(?:\b(?:only in|within|based in|located in)\s+(?:the )?"
    r"([A-Z][\w-]*(?: [A-Z][\w-]*)?)|\b([A-Z]{2,3}|[A-Z][a-z]+)[- ]only\b)")
# Names of the same place; each side is searched for the other's spellings.
_EU = ("Austria", "Belgium", "Bulgaria", "Croatia", "Cyprus", "Czechia", "Czech Republic",
       "Denmark", "Estonia", "Finland", "France", "Germany", "Greece", "Hungary", "Ireland",
       "Italy", "Latvia", "Lithuania", "Luxembourg", "Malta", "Netherlands", "Poland",
       "Portugal", "Romania", "Slovakia", "Slovenia", "Spain", "Sweden")
_PLACES = {"us": ("usa", "united states", "u.s."), "uk": ("united kingdom", "great britain"),
           "eu": ("europe", "european union", "emea", *_EU),
           "europe": ("eu", "emea", "european", *_EU)}


def requirement_reasons(posting: Posting, req: Requirements,
                        sponsorship_required: bool | None) -> list[str]:
    """Every one of these requirements `posting` fails (the caller adds the older ones)."""
    sentences = [s.strip() for s in _SENTENCES.split(posting.text) if s.strip()]
    checks: list[Callable[[], str | None]] = [
        lambda: _sponsorship(sentences, sponsorship_required),
        lambda: _authorization(sentences, req.authorized_in),
        lambda: _clearance(posting, req.security_clearance),
        lambda: _degree(sentences, req.degree),
        lambda: _student(posting, req.student),
        lambda: _remote(posting, req.remote_regions),
        lambda: _salary(posting, req.min_salary, req.salary_currency),
    ]
    reasons = [reason for check in checks if (reason := check())]
    return reasons + _languages(sentences, req.languages)


def _sponsorship(sentences: list[str], needed: bool | None) -> str | None:
    if needed and any(_NO_SPONSOR.search(s) for s in sentences):
        return "sponsorship: not offered"
    return None


def _authorization(sentences: list[str], allowed: tuple[str, ...]) -> str | None:
    if not allowed:
        return None
    for sentence in sentences:
        for match in _AUTHORIZED.finditer(sentence):
            place = (match.group(1) or match.group(2) or "").strip()
            if place and not _same_place(place, allowed):
                return f"work authorization: {place}"
    return None


def _clearance(posting: Posting, holds: bool | None) -> str | None:
    if holds is False and _CLEARANCE.search(f"{posting.title}\n{posting.text}"):
        return "security clearance: required"
    return None


def _degree(sentences: list[str], holds: str | None) -> str | None:
    if holds is None:
        return None
    have = DEGREE_LEVELS.index(holds)
    for sentence in sentences:
        if not _REQUIRED.search(sentence) or _SOFT.search(sentence) or \
                _OR_EXPERIENCE.search(sentence):
            continue
        for level, pattern in _DEGREES:  # the highest level named in a required sentence
            if re.search(pattern, sentence, re.I) and DEGREE_LEVELS.index(level) > have:
                return f"degree: {level} required"
    return None


def _languages(sentences: list[str], spoken: tuple[str, ...]) -> list[str]:
    if not spoken:
        return []
    missing: list[str] = []
    for sentence in sentences:
        if not _FLUENT.search(sentence) or _SOFT.search(sentence):
            continue
        missing += [lang for lang in LANGUAGES if mentions(lang, sentence)
                    and not any(mentions(lang, s) for s in spoken) and lang not in missing]
    return [f"language: {lang} required" for lang in missing]


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
    if place.strip() and not _same_place(place.strip(), regions):
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


def _same_place(place: str, accepted: tuple[str, ...]) -> bool:
    """Whether `place` names one of `accepted` (or the other way round), aliases included."""
    def spellings(name: str) -> tuple[str, ...]:
        return (name, *_PLACES.get(name.casefold().strip(), ()))

    return any(mentions(a, p) or mentions(p, a)
               for want in accepted for a in spellings(want) for p in spellings(place))
