"""The /healthz checks the core offers: the database answers, the reaper ran lately (no web
server needed to build them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from taskqueue.queues.maintenance import MaintenanceQueue
from taskqueue.queues.shared import SharedQueue

# A check answers None when all is well, else what is wrong (one line).
HealthCheck = Callable[[], Awaitable[str | None]]


def database_check(queue: SharedQueue) -> HealthCheck:
    """Fails when the database does not answer a query."""
    async def check() -> str | None:
        return None if await queue.database_ping() else "the database returned nothing"
    return check


def reaper_check(queue: MaintenanceQueue, interval_seconds: float) -> HealthCheck:
    """Fails when the reaper never ran, or not within two of its intervals."""
    async def check() -> str | None:
        latest = await queue.reaper_run_latest()
        if latest is None:
            return "the reaper has never run"
        age = float(latest["age_seconds"])
        if age > 2 * interval_seconds:
            return (f"the reaper last ran {age:.0f}s ago; it runs every "
                    f"{interval_seconds:.0f}s")
        return None
    return check
