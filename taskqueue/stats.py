"""`signoff stats CAP`: one capability's pipeline from the database, with the time it was read.

Generic in queue terms: statuses, the distinct tasks per `stage` event a workload records
(`event_insert(task_id, "stage", detail={"stage": "drafted"})`), skipped tasks by the skip
note, and the filtered-by-reason counts of run reports that producers store as succeeded
tasks of a sub-capability (`CAP.scrape`, result `{"filtered_by_reason": {reason: n}}`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskqueue.client import TaskQueue
from taskqueue.models import JSON, iso

__all__ = ["Stats", "add_parser", "read_stats", "stats_cmd"]


@dataclass(frozen=True)
class Stats:
    """A capability's figures; `stages` maps a stage name to the tasks that reached it."""

    capability: str
    read_at: datetime | None
    by_status: dict[str, int] = field(default_factory=dict)
    stages: dict[str, int] = field(default_factory=dict)
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    filtered_by_reason: dict[str, int] = field(default_factory=dict)
    report_runs: int = 0
    last_report_at: datetime | None = None

    @property
    def enqueued(self) -> int:
        return sum(self.by_status.values())

    def to_json(self) -> JSON:
        return {
            "capability": self.capability,
            "read_at": iso(self.read_at),
            "enqueued": self.enqueued,
            "by_status": self.by_status,
            "stages": self.stages,
            "skipped": self.by_status.get("skipped", 0),
            "skipped_by_reason": self.skipped_by_reason,
            "expired": self.by_status.get("expired", 0),
            "failed": self.by_status.get("failed", 0),
            "filtered_by_reason": self.filtered_by_reason,
            "reports": {"runs": self.report_runs, "last_at": iso(self.last_report_at)},
        }


def _counts(rows: list[dict[str, Any]], key: str) -> dict[str, int]:
    pairs = sorted(((str(r[key]), int(r["n"])) for r in rows), key=lambda p: (-p[1], p[0]))
    return dict(pairs)


async def read_stats(queue: TaskQueue, capability: str) -> Stats:
    """Read the figures of `capability` in one snapshot."""
    raw = await queue.stats_read(capability)
    runs = raw["report_runs"] or {}
    return Stats(
        capability=capability, read_at=raw["read_at"],
        by_status=_counts(raw["status_counts"], "status"),
        stages=_counts(raw["stage_counts"], "stage"),
        skipped_by_reason=_counts(raw["skip_reasons"], "reason"),
        filtered_by_reason=_counts(raw["report_reasons"], "reason"),
        report_runs=int(runs.get("runs") or 0), last_report_at=runs.get("last_at"),
    )


def print_stats(stats: Stats) -> None:
    from taskqueue.cli_output import when

    doc = stats.to_json()
    print(f"{stats.capability} (read at {when(stats.read_at)})")
    for name in ("enqueued", "skipped", "expired", "failed"):
        print(f"  {name + ':':<11}{doc[name]}")
    for title, counts in (("by status", stats.by_status), ("stages reached", stats.stages),
                          ("skipped by reason", stats.skipped_by_reason),
                          ("filtered by reason", stats.filtered_by_reason)):
        print(f"  {title}:" + ("" if counts else " -"))
        for name, n in counts.items():
            print(f"    {n:>5}  {name}")
    if stats.report_runs:
        print(f"  producer reports: {stats.report_runs}, last {when(stats.last_report_at)}")


async def stats_cmd(args: Any) -> int:
    from taskqueue.cli_commands import open_queue
    from taskqueue.cli_output import print_json

    async with open_queue() as queue:
        stats = await read_stats(queue, args.capability)
    if args.json:
        print_json(stats.to_json())
    else:
        print_stats(stats)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `signoff stats CAP [--json]` (cli.EXTRA_COMMANDS)."""
    p = sub.add_parser("stats", help="a capability's pipeline: statuses, stages, reasons")
    p.add_argument("capability")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=stats_cmd)
