"""What makes a cover letter read as written, not pasted: checks on its sentences.

A letter passes when every sentence has a finite verb, no sentence appears twice, and no
CV bullet is repeated word for word (no run of REPEAT_WORDS words or more of a bullet).

The verb check is deliberately simple and explainable: a sentence has a finite verb when it
holds a form of be/have/do or a modal ("is", "would"), or a subject pronoun followed by a
word that is not a preposition, article or pronoun ("I designed", "which reconciles").
"Backend engineer with nine years of experience." has neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from workloads.job_applications.sentences import split_sentences

__all__ = ["REPEAT_WORDS", "has_finite_verb", "letter_problems", "repeated_bullet"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


REPEAT_WORDS = 8  # a run this long from a bullet is a copy, not a reference
_FINITE = _set("""am is are was were have has had do does did will would can could shall
    should may might must""")
_SUBJECTS = _set("i we you they he she it who which that")
# After a subject, these are not verbs: "you for", "it the", "that a".
_NOT_VERBS = _set("""a an the this that these those my your our their his her its of in on
    at to for from with by as and or but if than then so not no i we you they he she it me us
    them who which what where when""")
_ADVERBS = _set("also especially then now still often recently already")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.-][A-Za-z0-9]+)*")  # "team's", "2.4", "p99"


def has_finite_verb(sentence: str) -> bool:
    """Whether `sentence` has a finite verb (see the module docstring for the rule)."""
    words = [w.casefold() for w in _WORD.findall(sentence)]
    if any(word in _FINITE for word in words):
        return True
    for i, word in enumerate(words[:-1]):
        if word not in _SUBJECTS:
            continue
        nxt = i + 1
        while nxt < len(words) - 1 and (words[nxt] in _ADVERBS or words[nxt].endswith("ly")):
            nxt += 1
        if words[nxt] not in _NOT_VERBS:
            return True
    return False


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def repeated_bullet(text: str, bullets: Iterable[str], run: int = REPEAT_WORDS) -> str | None:
    """The first bullet of which `text` repeats `run` or more words in a row, else None."""
    said = " " + " ".join(_words(text)) + " "
    for bullet in bullets:
        words = _words(bullet)
        for start in range(len(words) - run + 1):
            if " " + " ".join(words[start:start + run]) + " " in said:
                return bullet
    return None


def letter_problems(paragraphs: Iterable[str], bullets: Iterable[str]) -> list[str]:
    """Everything wrong with a letter's text, one line each; empty when it reads well."""
    problems: list[str] = []
    seen: set[str] = set()
    bullets = list(bullets)
    for paragraph in paragraphs:
        for sentence in split_sentences(paragraph):
            key = " ".join(_words(sentence))
            if not has_finite_verb(sentence):
                problems.append(f"a sentence without a verb: {sentence!r}")
            if key in seen:
                problems.append(f"a sentence said twice: {sentence!r}")
            seen.add(key)
            copied = repeated_bullet(sentence, bullets)
            if copied:
                problems.append(f"a CV bullet repeated word for word: {copied!r}")
    return problems
