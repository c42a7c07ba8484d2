"""The reaper: rescues tasks whose worker died and expires approvals nobody answered."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from taskqueue.maintenance.reminders import Reminders
from taskqueue.queues.maintenance import MaintenanceQueue
from taskqueue.store.models import iso

log = logging.getLogger("signoff.reaper")

# A running task with a NULL lease is an orphan once its row is this old (seconds).
# New code never writes a NULL lease; rows written by hand or older versions can.
DEFAULT_ORPHAN_AFTER = 3600.0


@dataclass(frozen=True)
class ReaperConfig:
    orphan_after: float = DEFAULT_ORPHAN_AFTER


@dataclass(frozen=True)
class ReapReport:
    """What one reaper run did; every count is present, zero included."""

    at: datetime
    requeued: int
    orphans_requeued: int
    failed: int
    expired: int
    task_ids: tuple[int, ...]
    duration_ms: float

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["at"] = iso(self.at)
        doc["task_ids"] = list(self.task_ids)
        return doc

    def summary(self) -> str:
        return (f"requeued={self.requeued} orphans_requeued={self.orphans_requeued} "
                f"failed={self.failed} expired={self.expired}")


class Reaper:
    """Run `run_once()` on a timer (the scheduler does); tests call it directly."""

    def __init__(self, queue: MaintenanceQueue, config: ReaperConfig | None = None) -> None:
        self.queue = queue
        self.config = config or ReaperConfig()

    async def run_once(self) -> ReapReport:
        started = time.monotonic()
        rescued = await self.queue.task_rescue_many(self.config.orphan_after)
        expired = await self.queue.approval_expire_many()
        # After the expiry, so an approval past its expiry is never reminded.
        await Reminders(self.queue).run_once()
        counts = {
            "requeued": sum(1 for r in rescued if r["status"] == "pending" and not r["orphan"]),
            "orphans_requeued": sum(1 for r in rescued if r["status"] == "pending" and r["orphan"]),
            "failed": sum(1 for r in rescued if r["status"] == "failed"),
            "expired": len(expired),
        }
        row = await self.queue.reaper_run_insert(**counts)
        for r in rescued:
            log.info("task reaped task=%s capability=%s from=running to=%s worker=%s orphan=%s",
                     r["id"], r["capability"], r["status"], r["worker"], r["orphan"])
        for r in expired:
            log.info("approval expired task=%s capability=%s approval=%s from=needs_approval "
                     "to=expired", r["id"], r["capability"], r["approval_id"])
        report = ReapReport(
            at=row["at"], task_ids=tuple(sorted(r["id"] for r in [*rescued, *expired])),
            duration_ms=round((time.monotonic() - started) * 1000, 2), **counts)
        log.info("reaper ran %s", report.summary())
        return report
