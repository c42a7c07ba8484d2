"""Which words make a sentence: the finite-verb check and past-tense verbs.

A sentence has a finite verb when it holds a form of be/have/do or a modal not right after a
relative pronoun ("is", "would"; not "that is"), a subject pronoun followed by a word that is
not a preposition, article or pronoun ("I designed"; not "that keeps", whose subject is a
relative pronoun), or one of a few present-tense verbs the letters use ("asks", "lists").
"Backend engineer with nine years of experience." has none.
"""

from __future__ import annotations

import re

__all__ = ["has_finite_verb", "is_past_verb"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_FINITE = _set("""am is are was were have has had do does did will would can could shall
    should may might must""")
_RELATIVE = _set("that which who whom whose")
_SUBJECTS = _set("i we you they he she it")
_PRESENT = _set("asks lists names shows needs requires describes covers includes")
# After a subject, these are not verbs: "you for", "it the".
_NOT_VERBS = _set("""a an the this that these those my your our their his her its of in on
    at to for from with by as and or but if than then so not no i we you they he she it me us
    them who which what where when""")
_ADVERBS = _set("also especially then now still often recently already")
_IRREGULAR_PAST = _set("""built led ran wrote made took grew cut set kept brought taught
    began drove won sold held put met paid found spun rewrote rebuilt oversaw undertook upheld
    shipped""")
_WORD = re.compile(r"[A-Za-z0-9€$£]+(?:['’.,/-][A-Za-z0-9]+)*")


def has_finite_verb(sentence: str) -> bool:
    """Whether `sentence` has a finite verb (see the module docstring for the rule)."""
    words = [w.casefold() for w in _WORD.findall(sentence)]
    for i, word in enumerate(words):
        after_relative = i > 0 and words[i - 1] in _RELATIVE
        if (word in _FINITE or word in _PRESENT) and not after_relative:
            return True
        if word in _SUBJECTS and i < len(words) - 1:
            nxt = i + 1
            while nxt < len(words) - 1 and (words[nxt] in _ADVERBS or words[nxt].endswith("ly")):
                nxt += 1
            if words[nxt] not in _NOT_VERBS:
                return True
    return False


def is_past_verb(word: str) -> bool:
    """Whether `word` reads as a past-tense verb ("designed", "led"): "I" + it is a claim."""
    lowered = word.casefold()
    return lowered.endswith("ed") or lowered in _IRREGULAR_PAST
