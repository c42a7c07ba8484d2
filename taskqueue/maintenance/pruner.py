"""The pruner: retention. Deletes old finished tasks, their events and attachments in batches.

What goes, per capability, once a task finished longer ago than its retention age
(`[retention] days`, default 30; a capability's `retention_days` overrides it):
- a task that never asked a person: the task with its events;
- a task that did: only the bytes of its attachments. The task, its approvals (question,
  decision, who, when, note) and its events stay as the audit trail until
  `[retention] audit_days` (default 365), then go like the others.
Unfinished tasks are never touched. Each statement deletes at most `batch` rows it can lock
without waiting (SKIP LOCKED), each in its own short transaction, so claims never wait.

A run that deleted at least `vacuum_after` rows then runs VACUUM (ANALYZE) on the tables its
deletes reached (MaintenanceQueue.table_vacuum_pruned), so their space is reused at once
rather than at autovacuum's next visit. A table PostgreSQL skips or fails to vacuum is one
warning line; the run still reports its deletes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from taskqueue.queues.maintenance import MaintenanceQueue

log = logging.getLogger("signoff.pruner")

DEFAULT_DAYS = 30.0
DEFAULT_AUDIT_DAYS = 365.0
DEFAULT_BATCH = 1000
# Rows (tasks and attachments) a run must delete before it VACUUMs: one batch's worth. Fewer
# are too few to matter (1,000 tasks hold about 1.3 MB with their events) and autovacuum
# frees them at its next visit. From there a VACUUM right away frees their space now, not up
# to a minute later (autovacuum_naptime; never with autovacuum off), and costs little beside
# the deletes: it reads only the pages changed since the last VACUUM (the visibility map
# skips the rest), and the indexes only when dead rows sit on more than 2 % of the pages.
# The soak (bench/README.md) prunes about 10,000 tasks every few seconds: with 10,000 here
# two runs in five fell short and its tables swung between 28 and 63 MB; with 1,000 every
# run that deleted vacuumed and they stayed at 22 to 39 MB, each VACUUM of the eight tables
# taking 0.15 to 0.33 s.
DEFAULT_VACUUM_AFTER = 1000
_DAY = 86400.0


@dataclass(frozen=True)
class PrunerConfig:
    """Retention ages in days (the default, per capability, the audit trail's), the rows a
    delete statement takes, and the rows a run deletes before it VACUUMs."""

    days: float = DEFAULT_DAYS
    audit_days: float = DEFAULT_AUDIT_DAYS
    capabilities: Mapping[str, float] = field(default_factory=dict)
    batch: int = DEFAULT_BATCH
    vacuum_after: int = DEFAULT_VACUUM_AFTER  # 0: never VACUUM


@dataclass(frozen=True)
class PruneReport:
    """What one run deleted: tasks (with their events) and attachments, per capability
    ("*" for every capability without its own age), in `duration_ms`; then the tables its
    VACUUM vacuumed and how long it took (None: no VACUUM ran)."""

    tasks: int
    attachments: int
    by_capability: Mapping[str, int]
    duration_ms: float
    vacuumed: tuple[str, ...] = ()
    vacuum_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"by_capability": dict(self.by_capability),
                               "vacuumed": list(self.vacuumed)}

    def summary(self) -> str:
        text = f"tasks={self.tasks} attachments={self.attachments}"
        if self.vacuum_ms is None:
            return text
        return f"{text} vacuumed={len(self.vacuumed)} vacuum_ms={self.vacuum_ms}"


class Pruner:
    """Run `run_once()` daily (the scheduler does) or from `signoff prune`."""

    def __init__(self, queue: MaintenanceQueue, config: PrunerConfig | None = None, *,
                 only: str | None = None) -> None:
        self.queue = queue
        self.config = config or PrunerConfig()
        self.only = only

    async def run_once(self) -> PruneReport:
        started = time.monotonic()
        tasks: dict[str, int] = {}
        attachments = 0
        for capability, days in self._targets():
            params = self._params(capability, days)
            attachments += await self._attachments(params)
            tasks[capability or "*"] = await self._tasks(params)
        deleted_ms = _ms(started)
        vacuumed, vacuum_ms = await self._vacuum(sum(tasks.values()) + attachments)
        report = PruneReport(sum(tasks.values()), attachments, tasks, deleted_ms,
                             vacuumed, vacuum_ms)
        log.info("pruner ran %s", report.summary())
        return report

    async def _vacuum(self, deleted: int) -> tuple[tuple[str, ...], float | None]:
        """VACUUM (ANALYZE) once the run deleted `vacuum_after` rows; the tables vacuumed
        and the milliseconds it took, or ((), None) when it did not run."""
        if not self.config.vacuum_after or deleted < self.config.vacuum_after:
            return (), None
        started = time.monotonic()
        outcome = await self.queue.table_vacuum_pruned()
        skipped = {table: why for table, why in outcome.items() if why is not None}
        if skipped:
            first = next(iter(skipped.values()))
            log.warning("pruner vacuum skipped tables=%s reason=%s", ",".join(skipped), first)
        return tuple(t for t in outcome if t not in skipped), _ms(started)

    def _targets(self) -> list[tuple[str | None, float]]:
        """(capability, days) to prune; None stands for every capability without its own."""
        own = dict(self.config.capabilities)
        if self.only is not None:
            return [(self.only, own.get(self.only, self.config.days))]
        return [*sorted(own.items()), (None, self.config.days)]

    def _params(self, capability: str | None, days: float) -> dict[str, Any]:
        return {"capability": capability, "age": days * _DAY,
                "audit_age": max(days, self.config.audit_days) * _DAY,
                "exclude": [] if capability else sorted(self.config.capabilities),
                "batch": self.config.batch, "after_id": 0}

    async def _tasks(self, params: dict[str, Any]) -> int:
        deleted = 0
        while True:
            row = await self.queue.task_prune_many(params)
            deleted += row["deleted"]
            if row["deleted"] < self.config.batch:
                return deleted
            params = params | {"after_id": row["last_id"]}

    async def _attachments(self, params: dict[str, Any]) -> int:
        deleted = 0
        while True:
            n = await self.queue.attachment_prune_many(params)
            deleted += n
            if n < self.config.batch:
                return deleted


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 2)
