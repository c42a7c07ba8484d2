"""Language levels: CEFR A1–C2 and the usual words for them, as one comparable number.

Used both for the profile (`languages = ["English C2", "German B1"]`) and for a posting's
"German at B2", "fluent French", "native English" or "working proficiency in Dutch".
"""

from __future__ import annotations

import re

__all__ = ["LANGUAGES", "NATIVE", "level_label", "level_phrases", "parse_language"]

LANGUAGES = ("English", "German", "French", "Spanish", "Italian", "Portuguese", "Dutch",
             "Swedish", "Norwegian", "Danish", "Finnish", "Polish", "Czech", "Russian",
             "Turkish", "Arabic", "Hebrew", "Japanese", "Mandarin", "Chinese", "Korean", "Hindi")
_CEFR = ("A1", "A2", "B1", "B2", "C1", "C2")
NATIVE = 7  # above C2: a native speaker meets every level
# Words for levels, longest first so "business fluent" wins over "fluent".
_WORDS = (
    ("professional working proficiency", 4), ("full professional proficiency", 5),
    ("working proficiency", 4), ("professional working", 4), ("business fluent", 5),
    ("business fluency", 5), ("business level", 5), ("business-level", 5),
    ("mother tongue", NATIVE), ("native speaker", NATIVE), ("native", NATIVE),
    ("bilingual", NATIVE), ("fluent", 5), ("fluency", 5), ("proficient", 5),
    ("proficiency", 5), ("advanced", 5), ("conversational", 3), ("intermediate", 3),
    ("basic", 2), ("elementary", 2),
)
_LEVEL = re.compile(
    r"(?<![\w-])(?:(?P<cefr>[ABC][12])\+?|"
    + "|".join(re.escape(word).replace(r"\ ", r"[\s-]+") for word, _ in _WORDS)
    + r")(?![\w-])", re.I)
_NAME = re.compile(r"[^\W\d_]+(?:[ -][^\W\d_]+)*")  # "German", "Brazilian Portuguese"


def level_phrases(sentence: str) -> list[tuple[int, int, int]]:
    """Every level named in `sentence`, as (start, end, level)."""
    return [(m.start(), m.end(), _level_of(m.group())) for m in _LEVEL.finditer(sentence)]


def _level_of(phrase: str) -> int:
    code = phrase.rstrip("+").upper()
    if code in _CEFR:
        return _CEFR.index(code) + 1
    words = " ".join(re.split(r"[\s-]+", phrase.casefold()))
    return next(level for word, level in _WORDS if " ".join(word.split("-")) == words)


def level_label(level: int) -> str:
    """"B2", or "native"."""
    return "native" if level >= NATIVE else _CEFR[level - 1]


def parse_language(entry: str) -> tuple[str, int | None]:
    """("German", 4) from "German B2", "German (B2)", "German: fluent"; a bare name has None.

    Raises ValueError naming what is wrong."""
    text = entry.strip()
    found = _LEVEL.search(text)
    level = None
    if found and found.end() == len(text.rstrip(") ")):
        level = _level_of(found.group())
        text = text[:found.start()].rstrip(" (:,-")
    if not _NAME.fullmatch(text):
        raise ValueError(f"expected a language and an optional level (A1-C2, fluent, native, "
                         f"...), like \"German B2\", got {entry!r}")
    return text, level
