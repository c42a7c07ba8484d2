"""Health signals: incident (the system's fault) and nudge (a person's move), with context."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.models import iso


@dataclass(frozen=True)
class SignalConfig:
    """Thresholds: a signal fires when more than `count` items are older than `age_hours`."""

    incident_count: int = 5
    incident_age_hours: float = 6
    nudge_count: int = 5
    nudge_age_hours: float = 24


@dataclass(frozen=True)
class Signal:
    name: str
    firing: bool
    count: int
    threshold: int
    age_hours: float
    oldest_age_hours: float
    owner: str
    meaning: str

    def to_json(self) -> dict[str, Any]:
        return {
            "firing": self.firing,
            "count": self.count,
            "threshold": self.threshold,
            "age_hours": self.age_hours,
            "oldest_age_hours": round(self.oldest_age_hours, 3),
            "owner": self.owner,
            "meaning": self.meaning,
        }


@dataclass(frozen=True)
class Signals:
    incident: Signal
    nudge: Signal
    expired_approvals: int
    failed_last_day: int
    open_approvals: int
    reaper_at: datetime | None
    reaper_outcome: dict[str, int] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "incident": self.incident.to_json(),
            "nudge": self.nudge.to_json(),
            "expired_approvals": self.expired_approvals,
            "failed_last_day": self.failed_last_day,
            "open_approvals": self.open_approvals,
            # Always an object, so readers can ask reaper.at before the first run.
            "reaper": {"at": iso(self.reaper_at), "outcome": self.reaper_outcome},
        }


async def read_signals(queue: SharedQueue, config: SignalConfig | None = None) -> Signals:
    """Read every signal from one snapshot of the database."""
    cfg = config or SignalConfig()
    raw = await queue.signal_read(cfg.incident_age_hours * 3600, cfg.nudge_age_hours * 3600)
    incident, nudge, counts, reaper = raw["incident"], raw["nudge"], raw["counts"], raw["reaper"]
    return Signals(
        incident=Signal(
            "incident", incident["count"] > cfg.incident_count, incident["count"],
            cfg.incident_count, cfg.incident_age_hours, incident["oldest_age_hours"],
            owner="system",
            meaning=f"tasks claimable but unclaimed for more than {cfg.incident_age_hours:g} h"),
        nudge=Signal(
            "nudge", nudge["count"] > cfg.nudge_count, nudge["count"], cfg.nudge_count,
            cfg.nudge_age_hours, nudge["oldest_age_hours"], owner="human",
            meaning=f"approvals unanswered for more than {cfg.nudge_age_hours:g} h"),
        expired_approvals=counts["expired_approvals"],
        failed_last_day=counts["failed_last_day"],
        open_approvals=counts["open_approvals"],
        reaper_at=reaper["at"] if reaper else None,
        reaper_outcome={k: reaper[k] for k in
                        ("requeued", "orphans_requeued", "failed", "expired")}
        if reaper else None,
    )
