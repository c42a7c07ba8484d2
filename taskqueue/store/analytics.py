"""The queue's analytics: who answers what, how fast, and what expires; and a
capability's pipeline figures (its counts, stages and its producer's reports)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskqueue.store.base import QueueBase
from taskqueue.store.checks import check_capability
from taskqueue.store.models import JSON
from taskqueue.store.queries import query

__all__ = ["AnalyticsMixin", "DecisionStats"]

# Each sort's memory in decision_stats' own transaction (the server's default is 4 MB):
# at a million decisions the query took 0.68 s with 4 MB and 0.49 s with 64 MB (issue 44);
# a sort larger still spills to disk, slower and still exact.
REPORT_WORK_MEM = "64MB"


@dataclass(frozen=True)
class DecisionStats:
    """One row of `decision_stats`: `scope` is "capability" (`capability` set), "person"
    (`person` set; `requests`, `expired`, `reminded` and `escalated` None: they are no
    one's) or "total". A person's `approved` counts each of their approves (every person of
    a four-eyes approve), its times run from the request to their own answer."""

    scope: str
    capability: str | None
    person: str | None
    requests: int | None
    approved: int
    revised: int
    skipped: int
    expired: int | None
    p50_seconds: float | None
    p90_seconds: float | None
    max_seconds: float | None
    # Reminders and escalations sent (their events) in the window; None on a person's row.
    reminded: int | None = None
    escalated: int | None = None

    @property
    def decided(self) -> int:
        """Approves, revises and skips: the decisions the times are taken from."""
        return self.approved + self.revised + self.skipped

    def to_json(self) -> JSON:
        return {"scope": self.scope, "capability": self.capability, "person": self.person,
                "requests": self.requests, "approved": self.approved,
                "revised": self.revised, "skipped": self.skipped, "expired": self.expired,
                "decided": self.decided, "p50_seconds": self.p50_seconds,
                "p90_seconds": self.p90_seconds, "max_seconds": self.max_seconds,
                "reminded": self.reminded, "escalated": self.escalated}


def _row(r: dict[str, Any]) -> DecisionStats:
    def count(key: str) -> int | None:
        return None if r[key] is None else int(r[key])

    def secs(key: str) -> float | None:
        return None if r[key] is None else float(r[key])

    return DecisionStats(
        scope=r["scope"], capability=r["capability"], person=r["person"],
        requests=count("requests"), approved=int(r["approved"]), revised=int(r["revised"]),
        skipped=int(r["skipped"]), expired=count("expired"), p50_seconds=secs("p50_seconds"),
        p90_seconds=secs("p90_seconds"), max_seconds=secs("max_seconds"),
        reminded=count("reminded"), escalated=count("escalated"))


class AnalyticsMixin(QueueBase):
    """Read-only figures: the people's side of the loop, and each capability's pipeline."""

    async def decision_stats(self, *, since: datetime | None = None,
                             until: datetime | None = None,
                             capability: str | None = None) -> list[DecisionStats]:
        """Requests, decisions, expiries, reminders, escalations and the time to decide
        (p50, p90, max) in [since, until): capability rows, then person rows (each person's
        own answers), then the total (always one)."""
        if capability is not None:
            check_capability(capability)
        params = {"since": since, "until": until, "capability": capability}
        # Without JIT: the plan's cost passes jit_above_cost from about 20,000 decisions,
        # and at 200,000 compiling took 1.1 to 2.3 s, more than running it (issue 44).
        # Unprepared, so the window's bounds are constants in its plan. REPORT_WORK_MEM:
        # the total's times (a million decisions: about 30 MB) sorted in memory.
        async with self._tx() as conn:
            await self._plan_settings(conn, work_mem=REPORT_WORK_MEM)
            found = await self._all_unprepared(conn, query("decision_stats"), params)
        return [_row(r) for r in found]

    # -- a capability's pipeline ------------------------------------------------------

    async def stats_read(self, capability: str) -> dict[str, Any]:
        """One capability's pipeline figures, read in one snapshot."""
        params = {"capability": capability}
        async with self._snapshot() as conn:
            now = await self._one(conn, "stats_now", {})
            out: dict[str, Any] = {"read_at": now["read_at"] if now else None}
            for name in ("status_counts", "stage_counts", "skip_reasons", "report_reasons"):
                out[name] = await self._all(conn, f"stats_{name}", params)
            out["report_runs"] = await self._one(conn, "stats_report_runs", params)
        return out

    async def stats_report_postings(self, capability: str, *, runs: int = 1
                                    ) -> list[dict[str, Any]]:
        """The `postings` items of the capability's latest `runs` producer reports."""
        async with self.pool.connection() as conn:
            return await self._all(conn, "stats_report_postings",
                                   {"capability": capability, "runs": runs})
