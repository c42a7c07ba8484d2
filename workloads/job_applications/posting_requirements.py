"""What a posting asks for: its title and requirement lines, without what it rules out, what
it only mentions and what is merely nice to have.

A line is a requirement when it stands under a requirements-like heading ("Requirements",
"About you", "What you'll do", ...), follows such a word and a colon ("Requirements: Kafka"),
or is worded as one ("required", "must", "experience with", "you will", ...). A posting with
neither is read whole, except the sections about the company, pay and benefits. From every
requirement line the clauses that are only a plus ("Go is a plus") or not needed ("no
Kubernetes needed") are left out, and so is the text after a negation up to the next comma
("a .NET role, not a Python role" asks for .NET only).
"""

from __future__ import annotations

import dataclasses
import re

from workloads.job_applications.boards import Posting
from workloads.job_applications.sentences import split_sentences

__all__ = ["listed_requirements", "requirement_lines", "requirement_posting",
           "requirement_text"]

_ASKING = (r"require|qualification|what you(?:'|’| wi)ll need|what you need|must[- ]haves?|"
           r"about you|you have|you bring|your profile|who you are|looking for|skills|"
           r"experience|what you(?:'|’| wi)ll do|responsibilit|your role|the role|your tasks|"
           r"duties|you will|what we expect|what we need|tech stack|our stack")
_OTHER = (r"about us|about the company|who we are|benefits|what we offer|we offer|perks|"
          r"why join|why us|our offer|salary|compensation|pay|how to apply|apply|location|"
          r"nice[- ]to[- ]haves?|bonus|preferred|pluses|good to have|equal opportunity")
_ASKING_HEADING = re.compile(rf"^(?:{_ASKING})", re.I)
_OTHER_HEADING = re.compile(rf"^(?:{_OTHER})", re.I)
# "Requirements: Kafka, Python" or "Salary: 80.000 €": a heading word, a colon, the rest.
_INLINE = re.compile(r"^([A-Za-z' ’]{3,40}):\s*(.+)$")
_MONEY_LINE = re.compile(r"^(?:salary|compensation|pay range|benefits|perks)\b", re.I)
_WORDED = re.compile(
    r"\b(?:require[sd]?|requirements?|must|need(?:ed|s)?|experience (?:with|in|of)|"
    r"experienced|proficien\w*|familiar\w*|knowledge of|expertise|you have|you bring|"
    r"you know|you(?:'|’)ve|strong|solid|background in|hands-on|years of|skilled|fluent|"
    r"comfortable with|looking for|you will|you(?:'|’)ll|mandatory|essential)\b", re.I)
_SOFT = re.compile(r"\b(?:a plus|nice to have|bonus|an advantage|advantageous|preferred|"
                   r"ideally|optional|not required|not needed|not necessary|no need|"
                   r"not expected|not a must|don(?:'|’)t need|do not need|not mandatory)\b",
                   re.I)
# A negation rules out what follows it, up to the next comma, colon or "but".
_NEGATED_SPAN = re.compile(
    r"(?:\b(?:not|no|never|without|rather than|instead of|except|other than|nor)\b|n(?:'|’)t\b)"
    r"[^,;:]*?(?=[,;:]|\bbut\b|$)", re.I)


def requirement_lines(posting: Posting) -> list[str]:
    """The posting's requirement clauses, negated parts and pluses taken out."""
    lines = _asking_lines(posting.text)
    clauses = [clause for line in lines for clause in split_sentences(line, clauses=True)]
    kept = [_without_negations(clause) for clause in clauses if not _SOFT.search(clause)]
    return [clause for clause in kept if clause.strip(" ,.;:-")]


def requirement_text(posting: Posting) -> str:
    """The title and the requirement lines, one a line: what "asks for" may name."""
    return "\n".join([posting.title, *requirement_lines(posting)])


def requirement_posting(posting: Posting) -> Posting:
    """The posting with its text cut to its requirements (for scoring terms against them)."""
    return dataclasses.replace(posting, text="\n".join(requirement_lines(posting)))


def _without_negations(clause: str) -> str:
    return " ".join(_NEGATED_SPAN.sub(" ", clause).split())


def _heading(line: str) -> str | None:
    """"asking", "other" or None when `line` is not a section heading."""
    bare = line.strip().rstrip(":").strip()
    if line.startswith("-") or not bare or len(bare.split()) > 8 or bare[-1] in ".!?":
        return None
    if _ASKING_HEADING.match(bare):
        return "asking"
    if _OTHER_HEADING.match(bare):
        return "other"
    return "other" if line.strip().endswith(":") else None


def listed_requirements(text: str) -> list[str]:
    """The lines a posting lists under a requirements-like heading (or after "Requirements:"),
    which are required without saying "required"."""
    return [line for line, kind in _classified(text) if kind == "listed"]


def _asking_lines(text: str) -> list[str]:
    """The lines that ask for something (see the module docstring)."""
    lines = _classified(text)
    asking = [line for line, kind in lines if kind in {"listed", "worded"}]
    return asking or [line for line, kind in lines if kind == "plain"]


def _classified(text: str) -> list[tuple[str, str]]:
    """Each line with what it is: "listed" (under an asking heading), "worded" (worded as a
    requirement), "plain" (neither, outside other sections) or "other"."""
    section: str | None = None
    out: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-•* ").strip()
        if not line:
            continue
        kind = _heading(raw.strip())
        if kind is not None:
            section = kind
            continue
        inline = _INLINE.match(line)
        if inline and _heading(inline.group(1)) is not None:
            asks = _heading(inline.group(1)) == "asking"
            out.append((inline.group(2), "listed" if asks else "other"))
        elif _MONEY_LINE.match(line) or section == "other":
            out.append((line, "other"))
        elif section == "asking":
            out.append((line, "listed"))
        else:
            out.append((line, "worded" if _WORDED.search(line) else "plain"))
    return out
