"""Splitting posting and letter text into sentences without cutting at abbreviations.

"A Ph.D. in ML is required", "U.S. citizens only", "languages (e.g. Python, Go)" and
"Dr. Weber's team" are one sentence each: a full stop ends a sentence only when the word
before it is not an abbreviation, or is one that can also end a sentence ("etc.", "Inc.",
"U.S.") and the next word starts with a capital letter.
"""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

# Candidate ends: after . ! ? (and, for clauses, ; and •) followed by space, or a new line.
_ENDS = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n+")
_CLAUSE_ENDS = re.compile(r"(?<=[.!?;•])[\"'”’)\]]*\s+|\n+")
# Followed by a name or a list item, so never the end of a sentence.
_NEVER = frozenset({
    "e.g.", "i.e.", "cf.", "vs.", "viz.", "incl.", "approx.", "esp.", "resp.", "ca.", "dr.",
    "mr.", "mrs.", "ms.", "prof.", "st.", "no.", "nr.", "z.b.", "bzw.", "ggf.", "u.a.", "d.h.",
})
# Can end a sentence too: a cut only before a capital letter.
_SOMETIMES = frozenset({"etc.", "inc.", "ltd.", "corp.", "co.", "jr.", "sr.", "llc.", "gmbh."})
_DOTTED = re.compile(r"(?:[A-Za-z]{1,3}\.){2,}")  # Ph.D., U.S., M.Sc., B.A., a.m.
_INITIAL = re.compile(r"[A-Z]\.")  # "J. Smith"
_LAST_WORD = re.compile(r"[\w.]+$")


def split_sentences(text: str, *, clauses: bool = False) -> list[str]:
    """The sentences of `text`, stripped, empty ones left out.

    `clauses` also cuts at semicolons and bullets ("EU work authorization required; German
    at B2" is two requirements)."""
    pieces: list[str] = []
    start = 0
    for end in (_CLAUSE_ENDS if clauses else _ENDS).finditer(text):
        if "\n" not in end.group() and _is_abbreviation(text[start:end.start()],
                                                        text[end.end():end.end() + 1]):
            continue
        pieces.append(text[start:end.start()])
        start = end.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def _is_abbreviation(before: str, next_char: str) -> bool:
    """Whether the full stop ending `before` belongs to an abbreviation, not a sentence end."""
    if not before.endswith("."):
        return False
    found = _LAST_WORD.search(before)
    word = found.group() if found else ""
    lowered = word.casefold()
    if lowered in _NEVER or _INITIAL.fullmatch(word):
        return True
    if lowered in _SOMETIMES or _DOTTED.fullmatch(word):
        return not next_char.isupper()
    return False
