"""A seeded history of questions with exact times to decide, and its known answers.

Each approval is inserted with SQL: decided `days_ago` days before now, asked exactly
`seconds` before it was decided, so the times to decide are exact (whole seconds). An approve
is recorded as a real one is, its vote first and then the decision (the database refuses an
`approved` approval without its counted approves, migration 0020).
"""

from __future__ import annotations

from taskqueue import TaskQueue
from tests.taskqueue.factories import sql

# (capability, decision, decided_by, seconds to decide, decided days ago); None: open.
HISTORY = [
    ("deploy", "approved", "alice", 60, 1),
    ("deploy", "approved", "alice", 120, 1),
    ("deploy", "approved", "alice", 300, 1),
    ("deploy", "revised", "bob", 600, 1),
    ("deploy", "skipped", "bob", 30, 1),
    ("deploy", "expired", None, 3600, 1),
    ("deploy", None, None, 0, 1),
    ("mail", "approved", "alice", 10, 1),
    ("mail", "approved", "alice", 20, 1),
    ("mail", "expired", None, 3600, 1),
    # Older than the 30 days the tests' --since reads.
    ("deploy", "approved", "carol", 9999, 40),
    ("deploy", "expired", None, 3600, 40),
]


async def seed_history(queue: TaskQueue, history: list[tuple] = HISTORY  # type: ignore[type-arg]
                       ) -> list[int]:
    """One task and one approval per entry; the task ids, in order."""
    ids = []
    # One moment for every statement: autocommit gives each its own now().
    [now] = await sql(queue, "SELECT now() AS at")
    for cap, decision, by, seconds, days in history:
        task = await queue.task_enqueue(cap, {"n": len(ids)})
        decided = "%s::timestamptz - make_interval(days => %s)"
        [row] = await sql(queue, f"""
            INSERT INTO approvals (task_id, question, created_at, expires_at)
            VALUES (%s, %s, {decided} - make_interval(secs => %s), {decided} + interval '1 day')
            RETURNING id""", task.id, f"Question {len(ids)}?", now["at"], days, seconds,
                          now["at"], days)
        if decision == "approved":
            await sql(queue, f"""
                INSERT INTO approval_votes (approval_id, person, decided_at)
                VALUES (%s, %s, {decided})""", row["id"], by, now["at"], days)
        if decision is not None:
            await sql(queue, f"""
                UPDATE approvals SET decision = %s, decided_by = %s, decided_at = {decided}
                WHERE id = %s""", decision, by, now["at"], days, row["id"])
        ids.append(task.id)
    return ids
