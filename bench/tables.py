"""The soak's view of the queue's tables: their sizes and live rows, and the VACUUM that
autovacuum would otherwise run."""

from __future__ import annotations

import time
from typing import Any

from bench.measure import execute

# Measured every round: what the pruner empties.
MEASURED = ("tasks", "task_events", "notifications", "approvals")
# Vacuumed: those, and every table their deletes cascade to (the pruner's own list is
# taskqueue.store.services.PRUNED_TABLES, not public; tests/bench checks they agree).
VACUUMED = (*MEASURED, "approval_attachments", "approval_votes", "gated_actions",
            "notification_deliveries")

_SIZES = "SELECT " + ", ".join(
    f"pg_total_relation_size('{t}') AS {t}" for t in MEASURED) + """,
       (SELECT count(*) FROM tasks) AS tasks_rows,
       (SELECT count(*) FROM notifications) AS notifications_rows"""


async def table_sizes(dsn: str) -> dict[str, Any]:
    """Total relation size (heap, indexes, TOAST) of each measured table in bytes, their
    sum, and the live rows of tasks and notifications."""
    row = await execute(dsn, _SIZES)
    sizes = {t: int(row[t]) for t in MEASURED}
    return {"bytes": sizes | {"total": sum(sizes.values())},
            "tasks_rows": int(row["tasks_rows"]),
            "notifications_rows": int(row["notifications_rows"])}


async def vacuum(dsn: str) -> float:
    """VACUUM (ANALYZE) the queue's tables, so their free space is reused; seconds taken."""
    started = time.perf_counter()
    await execute(dsn, "VACUUM (ANALYZE) " + ", ".join(VACUUMED))
    return round(time.perf_counter() - started, 3)


async def autovacuum_setting(dsn: str) -> str:
    """The server's `autovacuum` setting (on or off)."""
    return str((await execute(dsn, "SELECT current_setting('autovacuum') AS a"))["a"])
