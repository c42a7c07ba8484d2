"""The optional model drafter: an OpenAI-compatible chat endpoint writes the cover letter.

The model only orders the profile's own bullets (by id) and writes the letter; it never
rewrites a bullet, so the CV cannot state anything the profile does not. Its output is
validated, and any failure raises DrafterError: the caller retries, then falls back to
`drafting.draft_deterministic`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

import aiohttp

from workloads.job_applications.boards import Posting
from workloads.job_applications.drafting import (
    Draft,
    DraftBullet,
    DraftEntry,
    draft_deterministic,
)
from workloads.job_applications.feedback import parse_feedback
from workloads.job_applications.letter import letter_facts
from workloads.job_applications.letter_checks import LetterFacts, letter_problems
from workloads.job_applications.profile import Profile

__all__ = ["DrafterError", "ModelConfig", "draft_with_model", "validate_letter"]

MAX_PARAGRAPHS = 6
MAX_PARAGRAPH_CHARS = 1200
MAX_LETTER_CHARS = 3200  # about what fits one page with the letter head
MIN_LETTER_CHARS = 200
PLACEHOLDERS = re.compile(
    r"\[[^\]\n]{1,40}\]|\{\{|\}\}|\bTODO\b|\bTBD\b|\bXXX\b|<[^<>\n]{1,40}>|lorem ipsum",
    re.IGNORECASE,
)
_SYSTEM_PROMPT = (
    "You help a job candidate apply. Reply with one JSON object and nothing else: "
    '{"cover_letter": [paragraph, ...], "bullet_order": [bullet id, ...]}. '
    "Write 3 to 5 short paragraphs of whole sentences, no salutation and no signature, using "
    "only facts from the profile. Every sentence about what the candidate did restates one "
    "whole CV bullet (its action, its object and its figures), one bullet per sentence, and "
    "only bullets that match the posting's requirements, the best matches first. Numbers come "
    "only from the profile. Say what the posting asks for only with the requirement terms "
    "given. Every sentence names the company, the role or a requirement. "
    "List the ids of the CV bullets most relevant to the posting, best first; "
    "leave out irrelevant ones. Never use placeholders."
)


class DrafterError(Exception):
    """The model drafter failed (HTTP error, timeout or invalid output); retry or fall back."""


@dataclass(frozen=True)
class ModelConfig:
    base_url: str  # e.g. "https://api.openai.com/v1"; we POST {base_url}/chat/completions
    api_key: str
    model: str
    timeout: float = 60.0
    temperature: float = 0.2


async def draft_with_model(
    posting: Posting, profile: Profile, config: ModelConfig, feedback: str | None = None
) -> Draft:
    """A draft whose letter and bullet order come from the model; raises DrafterError."""
    base = draft_deterministic(posting, profile, feedback)
    bullet_ids = _bullet_ids(base)
    printed = [bullet.text for _, bullet in bullet_ids.values()]
    facts = letter_facts(posting, profile, parse_feedback(feedback, profile), printed)
    content = await _complete(config, _prompt(posting, profile, base, bullet_ids, feedback,
                                              facts))
    letter, order = _parse_reply(content, set(bullet_ids), facts)
    return replace(
        base,
        entries=_reorder(base, [bullet_ids[i] for i in order]),
        cover_letter=letter,
        drafter=f"model:{config.model}",
        notes=("the reviewer's note was given to the model",) if feedback else (),
    )


def _bullet_ids(draft: Draft) -> dict[str, tuple[int, DraftBullet]]:
    """`e0b1` -> (entry index, bullet) for every bullet of the base draft."""
    return {
        f"e{e}b{b}": (e, bullet)
        for e, entry in enumerate(draft.entries)
        for b, bullet in enumerate(entry.bullets)
    }


def _prompt(
    posting: Posting,
    profile: Profile,
    base: Draft,
    bullet_ids: dict[str, tuple[int, DraftBullet]],
    feedback: str | None,
    facts: LetterFacts,
) -> str:
    asked = ", ".join(sorted(facts.relevance, key=lambda t: -facts.relevance[t])) or "(none)"
    bullets = "\n".join(
        f"{key}: ({base.entries[e].title}, {base.entries[e].company}) {bullet.text}"
        for key, (e, bullet) in bullet_ids.items()
    )
    return (
        f"Posting: {posting.title} at {posting.company} ({posting.location})\n"
        f"{posting.text[:6000]}\n\nRequirement terms the candidate has: {asked}\n\n"
        f"Candidate: {profile.contact.name}\nSummary: {profile.summary}\n"
        f"Skills: {', '.join(base.skills)}\nBullets:\n{bullets}\n\n"
        f"Reviewer's note to honour: {feedback or '(none)'}"
    )


async def _complete(config: ModelConfig, prompt: str) -> str:
    body = {
        "model": config.model,
        "temperature": config.temperature,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": _SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ],
    }
    headers = {"Authorization": f"Bearer {config.api_key}"}
    url = f"{config.base_url.rstrip('/')}/chat/completions"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=config.timeout)) as session,
            session.post(url, json=body, headers=headers) as response,
        ):
            text = await response.text()
            if response.status >= 400:
                raise DrafterError(f"model endpoint: HTTP {response.status}: {text[:300]}")
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise DrafterError(f"model endpoint: {type(exc).__name__}: {exc}") from exc
    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise DrafterError(f"model endpoint: unexpected response shape: {text[:300]}") from exc
    if not isinstance(content, str):
        raise DrafterError("model endpoint: message content is not a string")
    return content


def _parse_reply(content: str, known_ids: set[str], facts: LetterFacts
                 ) -> tuple[tuple[str, ...], list[str]]:
    fenced = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", content, re.DOTALL)
    try:
        reply = json.loads(fenced.group(1) if fenced else content)
    except ValueError as exc:
        raise DrafterError(f"model output is not JSON: {content[:200]!r}") from exc
    if not isinstance(reply, dict):
        raise DrafterError("model output is not a JSON object")
    letter = validate_letter(reply.get("cover_letter"), facts)
    return letter, _validate_order(reply.get("bullet_order"), known_ids)


def validate_letter(paragraphs: object, facts: LetterFacts | None = None) -> tuple[str, ...]:
    """The paragraphs, stripped, if they are a usable letter; DrafterError says what is wrong.

    Besides its size and placeholders, the letter must pass letter_checks: whole sentences,
    none twice, and (with `facts`) true to the profile and the posting's requirements."""
    if not isinstance(paragraphs, list) or not all(isinstance(p, str) for p in paragraphs):
        raise DrafterError("cover_letter must be a list of strings")
    letter = tuple(" ".join(p.split()) for p in paragraphs if p.strip())
    if not 1 <= len(letter) <= MAX_PARAGRAPHS:
        raise DrafterError(f"cover_letter has {len(letter)} paragraphs (1-{MAX_PARAGRAPHS})")
    total = sum(len(p) for p in letter)
    if not MIN_LETTER_CHARS <= total <= MAX_LETTER_CHARS:
        raise DrafterError(
            f"cover_letter is {total} characters ({MIN_LETTER_CHARS}-{MAX_LETTER_CHARS})"
        )
    for paragraph in letter:
        if len(paragraph) > MAX_PARAGRAPH_CHARS:
            raise DrafterError(
                f"a paragraph is {len(paragraph)} characters (max {MAX_PARAGRAPH_CHARS})"
            )
        leftover = PLACEHOLDERS.search(paragraph)
        if leftover:
            raise DrafterError(f"cover_letter contains a placeholder: {leftover.group(0)!r}")
    problems = letter_problems(letter, facts)
    if problems:
        raise DrafterError(f"cover_letter: {problems[0]}")
    return letter


def _validate_order(order: object, known_ids: set[str]) -> list[str]:
    if not isinstance(order, list) or not order or not all(isinstance(i, str) for i in order):
        raise DrafterError("bullet_order must be a non-empty list of bullet ids")
    unknown = [i for i in order if i not in known_ids]
    if unknown:
        raise DrafterError(f"bullet_order names unknown bullets: {', '.join(unknown[:5])}")
    if len(set(order)) != len(order):
        raise DrafterError("bullet_order repeats a bullet")
    return order


def _reorder(base: Draft, chosen: list[tuple[int, DraftBullet]]) -> tuple[DraftEntry, ...]:
    """Keep only the chosen bullets, ranked in the model's order, grouped under their entry."""
    ranked = [(e, replace(b, rank=n)) for n, (e, b) in enumerate(chosen, start=1)]
    return tuple(
        replace(entry, bullets=tuple(b for e, b in ranked if e == index))
        for index, entry in enumerate(base.entries)
    )
