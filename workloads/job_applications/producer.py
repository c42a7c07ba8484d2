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

from taskqueue import ProducerContext
from taskqueue.queues.producer import ProducerQueue
from workloads.job_applications.board_jobs import with_stated_pay
from workloads.job_applications.boards import Posting, fetch_all
from workloads.job_applications.codec import payload_for
from workloads.job_applications.profile import Profile, load_profile
from workloads.job_applications.rank import Ranked, Rejection, dedupe_key, filter_postings, rank
from workloads.job_applications.settings import JobSettings, check_config, load_settings

__all__ = ["MAX_POSTINGS", "ScrapeReport", "check_config", "nightly_scrape", "scrape"]

MAX_POSTINGS = 500  # per-posting entries kept in one report (the counts cover them all)
MAX_TITLE = 200
# A posting whose one-job view answered 404/410 while its pay was read: taken down since the list.
GONE_REASON = "posting gone"


@dataclass
class ScrapeReport:
    """What one run did; `filtered_by_reason` counts each hard requirement a posting broke.

    `postings` says, for each posting fetched (at most MAX_POSTINGS, best outcome first),
    where it ended: filtered, below_min_score, known, below_top or enqueued, and why."""

    fetched: int = 0
    kept: int = 0
    rejected: int = 0
    filtered_by_reason: dict[str, int] = field(default_factory=dict)
    board_errors: list[dict[str, str]] = field(default_factory=list)
    enqueued: list[dict[str, Any]] = field(default_factory=list)
    already_known: int = 0
    below_top: int = 0
    below_min_score: int = 0
    min_score: int = 0
    postings: list[dict[str, Any]] = field(default_factory=list)
    postings_left_out: int = 0  # entries beyond MAX_POSTINGS

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


async def nightly_scrape(queue: ProducerQueue, context: ProducerContext) -> ScrapeReport:
    """The producer (`workloads.job_applications.producer:nightly_scrape`)."""
    settings = load_settings()
    report = await scrape(queue, settings, load_profile(settings.profile),
                          capability=context.capability, actor=f"producer:{context.name}")
    context.created += len(report.enqueued)
    context.existing += report.already_known
    return report


async def _filter(settings: JobSettings, profile: Profile, postings: tuple[Posting, ...]
                  ) -> tuple[list[Posting], list[Rejection]]:
    """Hard requirements; with a minimum salary, the kept postings' stated pay is read first
    (and a posting whose one-job view is gone is dropped as "posting gone")."""
    kept, rejections = filter_postings(postings, profile)
    if profile.requirements.min_salary is not None:
        paid, gone = await with_stated_pay(kept, settings.boards, timeout=settings.board_timeout)
        kept, more = filter_postings(paid, profile)
        rejections += more + [Rejection(posting, (GONE_REASON,)) for posting in gone]
    return kept, rejections


async def scrape(queue: ProducerQueue, settings: JobSettings, profile: Profile, *,
                 capability: str, actor: str = "producer:scrape") -> ScrapeReport:
    """One run: fetch, filter, rank, enqueue the top new postings; returns the report."""
    fetched = await fetch_all(settings.boards, timeout=settings.board_timeout)
    kept, rejections = await _filter(settings, profile, fetched.postings)
    ranked = rank(kept, profile, top=len(kept))
    relevant = [r for r in ranked if r.score >= settings.min_score]
    low = len(ranked) - len(relevant)
    reasons = Counter(reason for r in rejections for reason in r.reasons)
    if low:
        reasons[_low_reason(settings.min_score)] += low
    report = ScrapeReport(
        fetched=len(fetched.postings), kept=len(relevant), rejected=len(rejections),
        filtered_by_reason=dict(reasons.most_common()), below_min_score=low,
        min_score=settings.min_score,
        board_errors=[{"board": e.board, "error": e.error} for e in fetched.errors])
    known = await queue.task_dedupe_known(capability, [r.key for r in relevant])
    new = [r for r in relevant if r.key not in known]
    report.already_known, report.below_top = len(known), max(0, len(new) - settings.top)
    for item in new[: settings.top]:
        await _enqueue(queue, capability, item, actor, report)
    _list_postings(report, ranked, rejections, known, settings)
    return report


def _low_reason(min_score: int) -> str:
    return f"score below min_score {min_score}"


def _list_postings(report: ScrapeReport, ranked: list[Ranked], rejections: list[Rejection],
                   known: set[str], settings: JobSettings) -> None:
    """Every posting's outcome, in rank order then the filtered ones, bounded."""
    task_ids = {e["key"]: e["id"] for e in report.enqueued}
    entries, new = [], 0
    for place, item in enumerate(ranked, start=1):
        outcome, why = "known", ["a task already holds this posting"]
        if item.score < settings.min_score:
            outcome, why = "below_min_score", [_low_reason(settings.min_score)]
        elif item.key not in known:
            new += 1
            if new > settings.top:
                outcome, why = "below_top", [f"not among the top {settings.top} new postings"]
            elif item.key in task_ids:
                outcome, why = "enqueued", []
        entries.append(_entry(item.posting, outcome, why, item.score, place,
                              task_ids.get(item.key)))
    entries += [_entry(r.posting, "filtered", list(r.reasons)) for r in rejections]
    report.postings = entries[:MAX_POSTINGS]
    report.postings_left_out = max(0, len(entries) - MAX_POSTINGS)


def _entry(posting: Posting, outcome: str, reasons: list[str], score: int | None = None,
           place: int | None = None, task_id: int | None = None) -> dict[str, Any]:
    return {"key": dedupe_key(posting), "board": f"{posting.source}:{posting.board}",
            "company": posting.company[:MAX_TITLE], "title": posting.title[:MAX_TITLE],
            "outcome": outcome, "reasons": reasons, "score": score, "rank": place,
            "task_id": task_id}


async def _enqueue(queue: ProducerQueue, capability: str, item: Ranked, actor: str,
                   report: ScrapeReport) -> None:
    # The score is the priority, so the best posting is drafted first.
    done = await queue.task_enqueue(capability, payload_for(item), dedupe_key=item.key,
                                    priority=item.score, actor=actor)
    if done.created:
        report.enqueued.append({"id": done.id, "key": item.key, "score": item.score,
                                "company": item.posting.company, "role": item.posting.title})
    else:  # another run enqueued it between our check and now
        report.already_known += 1
