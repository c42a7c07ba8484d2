"""What makes a cover letter true and readable: each sentence checked against the profile and
the posting (the deterministic letter and the model's alike).

Every sentence has a finite verb and is said once. Then each sentence is one of:

- a template sentence (`TEMPLATES`), its slots filled with this posting's role and company,
  the posting's requirements ("Your posting asks for ..."), the terms a revise note asked to
  emphasize, or the profile's notice period;
- a claim: a sentence that shares two or more words with a profile bullet, or says what "I"
  did in the past tense. A claim restates one whole bullet: every word of the bullet's action
  and object (its text up to the first comma, bracket or clause), all its figures, no dangling
  last word, and no word of another bullet that its own bullet lacks. Its bullet must match
  one of the posting's requirements (or a term the person asked to emphasize), and no bullet
  the CV prints may fit the requirements better than the least fitting bullet told;
- the person's own words (a revise note's `paragraph:`), or a restatement of the profile's
  summary;
- otherwise a sentence that names this posting's company, role or requirements. A sentence
  naming none of these would fit any letter, and is a fault.

Numbers anywhere (outside the role, the company and the person's words) must appear in the
profile. "asks for X" names only terms of the posting's requirements. `shared_sentences`
finds sentences that most letters of a set share.

The verb check is in letter_verbs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from workloads.job_applications.letter_verbs import has_finite_verb, is_past_verb
from workloads.job_applications.sentences import split_sentences
from workloads.job_applications.terms import mentions

__all__ = ["CLAIM_ALSO", "CLAIM_FIRST", "CLAIM_LISTED", "TEMPLATES", "BulletFact",
           "LetterFacts", "bullet_score", "has_finite_verb", "is_past_verb", "letter_problems",
           "sentence_source", "shared_sentences"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# The deterministic letter's fixed sentences; {slots} are checked against the facts.
TEMPLATES: Mapping[str, str] = {
    "opening": "I am writing to apply for the {role} position at {company}.",
    "asks": "Your posting asks for {asked}.",
    "no_match": ("My CV lists what I have done so far, and I would be glad to explain how it "
                 "applies to the {role} role at {company}."),
    "emphasis": "For the {role} role, I would especially like to point to my work with {wanted}.",
    "emphasis_listed": ("For the {role} role, I would especially like to point to my work with "
                        "{wanted}, which my CV lists."),
    "closing": ("I would welcome the chance to talk about the {role} role and how I could "
                "contribute to {company}."),
    "closing_notice": ("I would welcome the chance to talk about the {role} role and how I "
                       "could contribute to {company}; I could start after my notice period of "
                       "{notice}."),
}
# The frames around a restated bullet (a claim, checked against its bullet); {terms} are the
# posting's requirements (or the emphasized terms) that the bullet names.
CLAIM_FIRST = "For {terms}: at {company}, where I {tense} as {title}, I {bullet}."
CLAIM_ALSO = "For {terms}: also at {company}, I {bullet}."
CLAIM_LISTED = ("For {terms}: my CV lists this work at {company}, where I {tense} as {title}: "
                "{bullet}.")

_STOP = _set("""a an the of in on at to for from with by as and or but if than then so not no
    i we you they he she it me us them my your our their his her its this that these those
    who which what where when while is am are was were be been have has had do does did will
    would can could shall should may might must also there work worked where cv lists
    especially point like role position""")
_DANGLING = _set("a an the of in on at to for from with by and or as its their our into")
_NUMBER_WORDS = _set("""one two three four five six seven eight nine ten eleven twelve
    thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty
    hundred thousand million billion dozen""")
_WORD = re.compile(r"[A-Za-z0-9€$£]+(?:['’.,/-][A-Za-z0-9]+)*")  # "team's", "2.4", "€40M"
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CORE_END = re.compile(r"[(,;:—–]|\s-\s|\b(?:that|which|who|while|so that|whose)\b")
# The list after "asks for" ends at a sentence stop, not at a dot inside a name ("Node.js").
_ASKS = re.compile(r"\basks for (.+?)(?:[.;:!?](?=\s|$)|, which\b|, and\b|$)", re.I)
_CLAIM_VERB = re.compile(r"\bI (?:also |then |later )?(\w+)\b")


@dataclass(frozen=True)
class BulletFact:
    """One profile bullet as the checks see it."""

    text: str
    skills: tuple[str, ...]
    company: str
    title: str
    printed: bool = True  # the CV prints it (omitted bullets are never told)
    current: bool = False  # its job has not ended ("where I work as")


@dataclass(frozen=True)
class LetterFacts:
    """What a letter may say: the profile's bullets and words, the posting's requirements."""

    role: str
    company: str
    bullets: tuple[BulletFact, ...]
    profile_text: str  # every word of the profile: numbers are checked against it
    summary: str
    asked_text: str  # posting_requirements.requirement_text: what "asks for" may name
    relevance: Mapping[str, float]  # requirement term -> weight (the posting's requirements)
    emphasized: tuple[str, ...] = ()
    own: tuple[str, ...] = field(default=())  # the person's own paragraphs
    notice: str = ""


def _words(text: str) -> list[str]:
    return [w.casefold().strip(".,") for w in _WORD.findall(text)]


def _content(text: str) -> set[str]:
    return {w for w in _words(text) if w not in _STOP and len(w) > 1}


def _figures(text: str) -> set[str]:
    return set(_NUMBER.findall(text)) | {w for w in _words(text) if w in _NUMBER_WORDS}


def _core(text: str) -> str:
    """A bullet's action and object: its text up to the first comma, bracket or clause."""
    found = _CORE_END.search(text)
    return text[:found.start()] if found else text


def bullet_score(bullet: BulletFact, relevance: Mapping[str, float]) -> float:
    """How well a bullet fits the posting's requirements (0: it matches none)."""
    text = f"{bullet.text} {' '.join(bullet.skills)}"
    return sum(weight for term, weight in relevance.items() if mentions(term, text))


def _template(sentence: str, facts: LetterFacts) -> tuple[str, list[str]] | None:
    """(template name, problems) when `sentence` is one of TEMPLATES, else None; of several
    that fit ("closing" and "closing_notice"), the one with the fewest problems."""
    found = [match for name, template in TEMPLATES.items()
             if (match := _fill(name, template, sentence, facts)) is not None]
    return min(found, key=lambda match: len(match[1]), default=None)


def _fill(name: str, template: str, sentence: str, facts: LetterFacts
          ) -> tuple[str, list[str]] | None:
    pattern = re.escape(template)
    for slot in ("role", "company", "asked", "wanted", "notice"):
        pattern = pattern.replace(re.escape("{" + slot + "}"), f"(?P<{slot}>.+?)")
    found = re.fullmatch(pattern, sentence)
    if found is None:
        return None
    slots = found.groupdict()
    expected = {"role": facts.role, "company": facts.company, "notice": facts.notice}
    problems = [f"a template sentence with the wrong {slot}: {sentence!r}"
                for slot, value in slots.items() if slot in expected and value != expected[slot]]
    emphasized = {t.casefold() for t in facts.emphasized}
    problems += [f"an emphasis on {term!r}, which no revise note asked for: {sentence!r}"
                 for term in _terms(slots.get("wanted") or "") if term.casefold() not in emphasized]
    return name, problems


def _terms(listing: str) -> list[str]:
    return [t.strip() for t in re.split(r",\s*|\s+and\s+|\s+or\s+", listing) if t.strip()]


def _asks_problems(sentence: str, facts: LetterFacts) -> list[str]:
    found = _ASKS.search(sentence)
    if found is None:
        return []
    return [f"\"asks for\" names {term!r}, which the posting's requirements do not ask for"
            for term in _terms(found.group(1)) if not mentions(term, facts.asked_text)]


def _numbers_problems(sentence: str, facts: LetterFacts) -> list[str]:
    text = sentence.replace(facts.role, " ").replace(facts.company, " ")
    known = _figures(facts.profile_text)
    return [f"a number the profile does not give: {number!r} in {sentence!r}"
            for number in sorted(_figures(text) - known)]


def _is_claim(sentence: str, facts: LetterFacts) -> bool:
    said = _content(sentence)
    if any(len(said & _content(b.text)) >= 2 for b in facts.bullets):
        return True
    verb = _CLAIM_VERB.search(sentence)
    return verb is not None and is_past_verb(verb.group(1))


def _claim_bullet(sentence: str, facts: LetterFacts) -> BulletFact | None:
    said = _content(sentence)
    best = max(facts.bullets, key=lambda b: len(said & _content(b.text)), default=None)
    if best is None or len(said & _content(best.text)) < 2:
        return None
    return best


def _claim_problems(sentence: str, bullet: BulletFact, facts: LetterFacts) -> list[str]:
    said, words = _content(sentence), _words(sentence)
    problems = []
    missing = sorted(_content(_core(bullet.text)) - said)
    if missing or (words and words[-1] in _DANGLING):
        problems.append(f"a claim cut mid-phrase (its bullet says {_core(bullet.text)!r}): "
                        f"{sentence!r}")
    lost = sorted(_figures(bullet.text) - _figures(sentence))
    if lost:
        problems.append(f"a claim without its bullet's figures ({', '.join(lost)}): {sentence!r}")
    own = _content(f"{bullet.text} {' '.join(bullet.skills)} {bullet.company} {bullet.title} "
                   f"{facts.role} {facts.company}") | _figures(bullet.text)
    others = set().union(*(_content(b.text) | _figures(b.text)
                           for b in facts.bullets if b is not bullet))
    joined = sorted((said | _figures(sentence)) - own & others)
    if joined:
        problems.append(f"a claim joined to another bullet's object ({', '.join(joined)}): "
                        f"{sentence!r}")
    if not bullet.printed:
        problems.append(f"a claim about a bullet the CV leaves out: {sentence!r}")
    elif bullet_score(bullet, facts.relevance) <= 0 and not _emphasized(bullet, facts):
        problems.append(f"a claim whose bullet matches none of the posting's requirements: "
                        f"{sentence!r}")
    return problems


def _emphasized(bullet: BulletFact, facts: LetterFacts) -> bool:
    text = f"{bullet.text} {' '.join(bullet.skills)}"
    return any(mentions(term, text) for term in facts.emphasized)


def sentence_source(sentence: str, facts: LetterFacts) -> str:
    """Where a sentence comes from: "template:NAME", "bullet:N" (its index in
    facts.bullets), "own", "summary" or "free"."""
    if any(sentence in split_sentences(own) for own in facts.own):
        return "own"
    found = _template(sentence, facts)
    if found is not None:
        return f"template:{found[0]}"
    if _is_claim(sentence, facts):
        bullet = _claim_bullet(sentence, facts)
        return f"bullet:{facts.bullets.index(bullet)}" if bullet else "free"
    said = _content(sentence)
    if said and len(said - _content(facts.summary)) <= len(said) // 5:
        return "summary"
    return "free"


def _sentence_problems(sentence: str, facts: LetterFacts) -> tuple[list[str], BulletFact | None]:
    source = sentence_source(sentence, facts)
    if source == "own":
        return [], None
    problems = _numbers_problems(sentence, facts) + _asks_problems(sentence, facts)
    if source.startswith("template:"):
        found = _template(sentence, facts)
        return problems + (found[1] if found else []), None
    if source.startswith("bullet:"):
        bullet = facts.bullets[int(source.split(":")[1])]
        return problems + _claim_problems(sentence, bullet, facts), bullet
    if _is_claim(sentence, facts):
        return [*problems, f"a claim that restates no profile bullet: {sentence!r}"], None
    specific = [facts.role, facts.company, *facts.relevance]
    if source == "free" and not any(mentions(t, sentence) for t in specific if t.strip()):
        problems.append(f"a sentence that would fit any letter: {sentence!r}")
    return problems, None


def _relevance_problems(told: list[BulletFact], facts: LetterFacts) -> list[str]:
    """No printed bullet may fit better than the least fitting bullet the letter tells."""
    chosen = [b for b in told if not _emphasized(b, facts)]
    if not chosen:
        return []
    floor = min(bullet_score(b, facts.relevance) for b in chosen)
    better = [b for b in facts.bullets if b.printed and b not in told
              and bullet_score(b, facts.relevance) > floor]
    return [f"a more relevant bullet is not told: {b.text!r}" for b in better]


def letter_problems(paragraphs: Iterable[str], facts: LetterFacts | None = None) -> list[str]:
    """Everything wrong with a letter's text, one line each; empty when it is true and reads
    well. Without `facts` only the verb and repetition checks run."""
    problems: list[str] = []
    seen: set[str] = set()
    told: list[BulletFact] = []
    for paragraph in paragraphs:
        for sentence in split_sentences(paragraph):
            key = " ".join(_words(sentence))
            if not has_finite_verb(sentence):
                problems.append(f"a sentence without a verb: {sentence!r}")
            if key in seen:
                problems.append(f"a sentence said twice: {sentence!r}")
            seen.add(key)
            if facts is not None:
                found, bullet = _sentence_problems(sentence, facts)
                problems += found
                told += [bullet] if bullet is not None and bullet not in told else []
    if facts is not None:
        problems += _relevance_problems(told, facts)
    return problems


def shared_sentences(letters: Sequence[Sequence[str]], share: float = 0.5) -> list[str]:
    """The sentences found in more than `share` of `letters` (each a list of paragraphs)."""
    counts: Counter[str] = Counter()
    for letter in letters:
        counts.update({" ".join(_words(s)): s for p in letter for s in split_sentences(p)}
                      .keys())
    first = {" ".join(_words(s)): s for letter in letters for p in letter
             for s in split_sentences(p)}
    return [first[key] for key, n in counts.items() if n > share * len(letters)]
