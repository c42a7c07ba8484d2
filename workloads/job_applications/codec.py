"""Postings and drafts to and from JSON, for task payloads and saved state."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from workloads.job_applications.boards import Posting
from workloads.job_applications.drafting import Draft, DraftBullet, DraftEntry
from workloads.job_applications.rank import Ranked

__all__ = ["draft_from_json", "draft_to_json", "payload_for", "posting_from_json"]


def payload_for(ranked: Ranked) -> dict[str, Any]:
    """A task's payload: the posting, its score and the terms behind it."""
    return {
        "posting": dataclasses.asdict(ranked.posting),
        "score": ranked.score,
        "top_terms": list(ranked.top_terms),
        "key": ranked.key,
    }


def posting_from_json(data: Mapping[str, Any]) -> Posting:
    fields = {f.name for f in dataclasses.fields(Posting)}
    return Posting(**{k: v for k, v in data.items() if k in fields})


def draft_to_json(draft: Draft) -> dict[str, Any]:
    return dataclasses.asdict(draft)


def draft_from_json(data: Mapping[str, Any]) -> Draft:
    entries = tuple(
        DraftEntry(
            company=e["company"], title=e["title"], start=e["start"], end=e["end"],
            location=e["location"],
            bullets=tuple(DraftBullet(b["text"], b["rank"], b["score"]) for b in e["bullets"]),
        )
        for e in data["entries"]
    )
    return Draft(
        posting_key=data["posting_key"], company=data["company"], role=data["role"],
        entries=entries, skills=tuple(data["skills"]),
        cover_letter=tuple(data["cover_letter"]), drafter=data["drafter"],
        notes=tuple(data.get("notes", ())), highlights=tuple(data.get("highlights", ())),
    )
