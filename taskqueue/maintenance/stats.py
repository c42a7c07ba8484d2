"""Stats: one capability's pipeline read from the database, with the time it was read.

Generic in queue terms: statuses, the distinct tasks per `stage` event a workload records
(`event_insert(task_id, "stage", detail={"stage": "drafted"})`), skipped tasks by the skip
note, and the filtered-by-reason counts of the producer runs' reports
(`{"filtered_by_reason": {reason: n}}`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskqueue.queues.maintenance import MaintenanceQueue
from taskqueue.store.models import JSON, iso

__all__ = ["Stats", "read_stats"]


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


async def read_stats(queue: MaintenanceQueue, capability: str) -> Stats:
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
