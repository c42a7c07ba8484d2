"""The pruner: retention. Deletes old finished tasks, their events and attachments in batches.

What goes, per capability, once a task finished longer ago than its retention age
(`[retention] days`, default 30; a capability's `retention_days` overrides it):
- a task that never asked a person: the task with its events;
- a task that did: only the bytes of its attachments. The task, its approvals (question,
  decision, who, when, note) and its events stay as the audit trail until
  `[retention] audit_days` (default 365), then go like the others.
Unfinished tasks are never touched. Each statement deletes at most `batch` rows it can lock
without waiting (SKIP LOCKED), each in its own short transaction, so claims never wait.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from taskqueue.store.client import TaskQueue

log = logging.getLogger("signoff.pruner")

DEFAULT_DAYS = 30.0
DEFAULT_AUDIT_DAYS = 365.0
DEFAULT_BATCH = 1000
_DAY = 86400.0


@dataclass(frozen=True)
class PrunerConfig:
    """Retention ages in days: the default, per capability, and the audit trail's."""

    days: float = DEFAULT_DAYS
    audit_days: float = DEFAULT_AUDIT_DAYS
    capabilities: Mapping[str, float] = field(default_factory=dict)
    batch: int = DEFAULT_BATCH


@dataclass(frozen=True)
class PruneReport:
    """What one run deleted: tasks (with their events) and attachments, per capability
    ("*" for every capability without its own age)."""

    tasks: int
    attachments: int
    by_capability: Mapping[str, int]
    duration_ms: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"by_capability": dict(self.by_capability)}

    def summary(self) -> str:
        return f"tasks={self.tasks} attachments={self.attachments}"


class Pruner:
    """Run `run_once()` daily (the scheduler does) or from `signoff prune`."""

    def __init__(self, queue: TaskQueue, config: PrunerConfig | None = None, *,
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
        report = PruneReport(sum(tasks.values()), attachments, tasks,
                             round((time.monotonic() - started) * 1000, 2))
        log.info("pruner ran %s", report.summary())
        return report

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
