"""Splitting posting and letter text into sentences without cutting at abbreviations.

A full stop after an ordinary word ends a sentence; after an abbreviation it ends one only
when the abbreviation can end a sentence and the next word can only start one:

- Never a sentence end: titles and Latin/list abbreviations that are always followed by the
  rest of their sentence ("Dr. Weber", "Prof. Ng", "e.g. Python", "i.e. Go", "vs. Java",
  "approx. 40 hours"), and "No." before a number ("No. 5"; "Sponsorship: No." is a word).
- Sometimes a sentence end: abbreviations a sentence can stop on ("etc.", "Inc.", "Ltd.",
  "Corp.", "Co.", "Jr.", "Sr.", "St."), dotted ones ("Ph.D.", "M.Sc.", "U.S.", "a.m.") and
  single capital letters ("J. Smith", but also the languages C and R). These end a sentence
  only before a common sentence starter ("The", "We", "Apply", "Please" ...; `_STARTERS`), so
  "We hire in the U.S. The team is small." is two sentences while "A Ph.D. Machine Learning
  background", "U.S. Army", "Acme Inc. Berlin" and "J. Smith" stay whole. A capital letter
  alone proves nothing: names, places and subjects after an abbreviation are capitalised too.

A new line always ends a sentence; `clauses` also cuts at semicolons and bullets.
"""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

# Candidate ends: after . ! ? (and, for clauses, ; and •) plus closing quotes or brackets,
# followed by space; or a new line. The closers belong to the sentence they close.
_ENDS = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n+")
_CLAUSE_ENDS = re.compile(r"(?<=[.!?;•])[\"'”’)\]]*\s+|\n+")
# Followed by a name, a number or a list item, so never the end of a sentence.
_NEVER = frozenset({
    "e.g.", "i.e.", "cf.", "vs.", "viz.", "incl.", "approx.", "esp.", "resp.", "ca.", "dr.",
    "mr.", "mrs.", "ms.", "prof.", "z.b.", "bzw.", "ggf.", "u.a.", "d.h.",
})
# Abbreviations of "number": only before a number ("No. 5", "Nr. 12").
_NUMBER = frozenset({"no.", "nr."})
# Can end a sentence too: a cut only before a sentence starter.
_SOMETIMES = frozenset({
    "etc.", "inc.", "ltd.", "corp.", "co.", "jr.", "sr.", "st.", "llc.", "gmbh.",
})
# Ph.D., U.S., M.Sc., M.Eng., B.A., a.m.; not "Vue.js." or "Node.js." (a name's own dot).
_DOTTED = re.compile(r"(?:[a-z]\.){2,}|(?:[A-Z][a-z]{0,2}\.){2,}")
_INITIAL = re.compile(r"[A-Z]\.")  # "J. Smith", or the language C at a sentence's end
_LAST_WORD = re.compile(r"[\w.]+$")
# The next word, past opening quotes and brackets; a word with a full stop of its own
# ("A. Smith", "No. 5") is an initial or an abbreviation, never a starter.
_NEXT_WORD = re.compile(r"[\"'“‘(\[]*([A-Za-z]+)(?![\w.])")
# Words that begin sentences in postings and letters but hardly ever follow an abbreviation
# inside one: pronouns, determiners, question words, sentence adverbs, and the imperatives
# postings end with. Deliberately not "And"/"Or" (continue a list: "M.Sc. Or Ph.D.").
_STARTERS = frozenset({
    "the", "a", "an", "this", "that", "these", "those", "there", "here", "it", "its", "we",
    "our", "you", "your", "they", "their", "he", "she", "i", "my", "if", "as", "for",
    "to", "in", "on", "at", "by", "from", "with", "while", "when", "where", "what", "why",
    "how", "who", "which", "since", "because", "after", "before", "once", "during", "all",
    "each", "every", "most", "some", "many", "no", "not", "also", "however", "additionally",
    "apply", "please", "send", "join", "submit", "contact", "email", "visit", "note", "see",
    "learn", "read", "find", "are", "is", "do", "does", "can", "will", "must", "should",
    "would", "could",
})


def split_sentences(text: str, *, clauses: bool = False) -> list[str]:
    """The sentences of `text`, stripped, empty ones left out.

    `clauses` also cuts at semicolons and bullets ("EU work authorization required; German
    at B2" is two requirements)."""
    pieces: list[str] = []
    start = 0
    for end in (_CLAUSE_ENDS if clauses else _ENDS).finditer(text):
        if "\n" not in end.group() and _is_abbreviation(text[start:end.start()],
                                                        text[end.end():end.end() + 40]):
            continue
        pieces.append(text[start:end.end()])
        start = end.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def _is_abbreviation(before: str, after: str) -> bool:
    """Whether the full stop ending `before` belongs to an abbreviation, not a sentence end;
    `after` is the text that follows."""
    if not before.endswith("."):
        return False
    found = _LAST_WORD.search(before)
    word = found.group() if found else ""
    lowered = word.casefold()
    if lowered in _NEVER and not word[:-1].isupper():  # "MS." is the degree, "Ms." a title
        # "under 80 ms." is milliseconds, not the title Ms.
        return not (lowered == "ms." and re.search(r"\d\s*ms\.$", before, re.I))
    if lowered in _NUMBER:
        return after[:1].isdigit() or after[:1] == "#"
    if lowered in _SOMETIMES or _DOTTED.fullmatch(word) or _INITIAL.fullmatch(word):
        return not _starts_sentence(after)
    return False


def _starts_sentence(text: str) -> bool:
    """Whether `text` opens with a word that begins a sentence, not a name or a noun."""
    found = _NEXT_WORD.match(text)
    word = found.group(1) if found else ""
    # Capitalised as a sentence's first word: "The", "A", "I"; not "the", nor "US" or "IT".
    return word == word.capitalize() and word.casefold() in _STARTERS
