"""Matching profile terms (skills, tags) in posting text: boundaries that respect C#, C++, Go."""

from __future__ import annotations

import re
from functools import lru_cache

# A few spellings that mean the same skill; both directions are searched.
ALIASES: dict[str, tuple[str, ...]] = {
    "postgresql": ("postgres",),
    "kubernetes": ("k8s",),
    "javascript": ("js",),
    "golang": ("go",),
    "go": ("golang",),
    "ci/cd": ("continuous integration", "continuous delivery"),
}

# Letters, digits and the symbols that are part of a term (c#, c++, node.js, R&D) end a match.
_BEFORE = r"(?<![\w#+&])"
_AFTER = r"(?![\w#+&]|\.\w)"


@lru_cache(maxsize=1024)
def term_pattern(term: str) -> re.Pattern[str]:
    """A regex for `term` and its aliases as whole words, ignoring case.

    Terms of one or two characters ("Go", "R", "C") match only with the casing written in the
    profile: otherwise "go" would match every "we go beyond".
    """
    spellings = (term, *ALIASES.get(term.casefold(), ()))
    alternatives = "|".join(
        r"[\s-]+".join(re.escape(word) for word in spelling.split()) for spelling in spellings
    )
    flags = 0 if len(term.strip()) <= 2 else re.IGNORECASE
    return re.compile(f"{_BEFORE}(?:{alternatives}){_AFTER}", flags)


def count_term(term: str, text: str) -> int:
    """How often `term` (or an alias) occurs in `text` as a whole word."""
    return len(term_pattern(term).findall(text))


def mentions(term: str, text: str) -> bool:
    """Whether `term` (or an alias) occurs in `text` as a whole word."""
    return term_pattern(term).search(text) is not None
