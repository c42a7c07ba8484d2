"""The nightly scrape: fetch both boards, filter, rank, enqueue the best new postings.

Each posting's task carries `dedupe_key=rank.dedupe_key(posting)` (not the producer's
per-night key), and postings any task of the capability already holds, in any status,
are left out first: a posting skipped, expired or failed once never comes back.

The producer returns its report; the core stores it with the period's producer run, so
`signoff stats` shows what was filtered and why next to the pipeline it fed, and a period
that already ran (a restart, `signoff produce`) scrapes nothing a second time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from taskqueue import ProducerContext, TaskQueue
from workloads.job_applications.boards import fetch_all
from workloads.job_applications.codec import payload_for
from workloads.job_applications.profile import Profile, load_profile
from workloads.job_applications.rank import Ranked, filter_postings, rank
from workloads.job_applications.settings import JobSettings, check_config, load_settings

__all__ = ["ScrapeReport", "check_config", "nightly_scrape", "scrape"]


@dataclass
class ScrapeReport:
    """What one run did; `filtered_by_reason` counts each hard requirement a posting broke."""

    fetched: int = 0
    kept: int = 0
    rejected: int = 0
    filtered_by_reason: dict[str, int] = field(default_factory=dict)
    board_errors: list[dict[str, str]] = field(default_factory=list)
    enqueued: list[dict[str, Any]] = field(default_factory=list)
    already_known: int = 0
    below_top: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


async def nightly_scrape(queue: TaskQueue, context: ProducerContext) -> ScrapeReport:
    """The producer (`workloads.job_applications.producer:nightly_scrape`)."""
    settings = load_settings()
    report = await scrape(queue, settings, load_profile(settings.profile),
                          capability=context.capability, actor=f"producer:{context.name}")
    context.created += len(report.enqueued)
    context.existing += report.already_known
    return report


async def scrape(queue: TaskQueue, settings: JobSettings, profile: Profile, *,
                 capability: str, actor: str = "producer:scrape") -> ScrapeReport:
    """One run: fetch, filter, rank, enqueue the top new postings; returns the report."""
    fetched = await fetch_all(settings.boards, timeout=settings.board_timeout)
    kept, rejections = filter_postings(fetched.postings, profile)
    reasons = Counter(reason for r in rejections for reason in r.reasons)
    report = ScrapeReport(
        fetched=len(fetched.postings), kept=len(kept), rejected=len(rejections),
        filtered_by_reason=dict(reasons.most_common()),
        board_errors=[{"board": e.board, "error": e.error} for e in fetched.errors])
    ranked = rank(kept, profile, top=len(kept))
    known = await queue.task_dedupe_known(capability, [r.key for r in ranked])
    new = [r for r in ranked if r.key not in known]
    report.already_known, report.below_top = len(known), max(0, len(new) - settings.top)
    for item in new[: settings.top]:
        await _enqueue(queue, capability, item, actor, report)
    return report


async def _enqueue(queue: TaskQueue, capability: str, item: Ranked, actor: str,
                   report: ScrapeReport) -> None:
    # The score is the priority, so the best posting is drafted first.
    done = await queue.task_enqueue(capability, payload_for(item), dedupe_key=item.key,
                                    priority=item.score, actor=actor)
    if done.created:
        report.enqueued.append({"id": done.id, "key": item.key, "score": item.score,
                                "company": item.posting.company, "role": item.posting.title})
    else:  # another run enqueued it between our check and now
        report.already_known += 1
