"""TaskQueue.decision_stats gives, row for row and figure for figure, what its earlier form
gave (issue 44 rewrote it for speed): the earlier SQL is kept here as the reference and
both run on one varied history (four-eyes approves, revises, skips, expiries, reminders and
escalations, a request asked twice, spellings of one person, approves without their vote)
over windows that cut through it and capability filters."""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timedelta
from typing import Any

import pytest

from taskqueue import Decision, Reaper, Reminders, TaskQueue
from tests.taskqueue.factories import parked, sql

# decision_stats as it was before issue 44 (taskqueue/store/sql/analytics.sql at a9b97de).
REFERENCE = """
WITH bounds AS (
    SELECT COALESCE(%(since)s::timestamptz, '-infinity') AS lo,
           COALESCE(%(until)s::timestamptz, 'infinity') AS hi
),
scope AS (
    SELECT a.id, a.task_id, a.created_at, a.decided_at, a.decision, a.decided_by,
           a.reminded_at, a.escalated_at, t.capability,
           EXTRACT(EPOCH FROM a.decided_at - a.created_at)::float8 AS seconds
    FROM approvals a JOIN tasks t ON t.id = a.task_id
    WHERE (%(capability)s::text IS NULL OR t.capability = %(capability)s::text)
),
requests AS (
    SELECT capability, 'asked' AS kind, NULL::float8 AS seconds
    FROM scope, bounds WHERE created_at >= lo AND created_at < hi
    UNION ALL
    SELECT capability, decision, CASE WHEN decision <> 'expired' THEN seconds END
    FROM scope, bounds WHERE decided_at >= lo AND decided_at < hi
    UNION ALL
    SELECT s.capability, e.kind, NULL
    FROM scope s JOIN task_events e ON e.task_id = s.task_id, bounds
    WHERE (s.reminded_at IS NOT NULL OR s.escalated_at IS NOT NULL)
      AND e.kind IN ('reminded', 'escalated') AND e.detail->>'approval_id' = s.id::text
      AND e.at >= lo AND e.at < hi
),
answers AS (
    SELECT v.person, 'approved' AS kind,
           EXTRACT(EPOCH FROM v.decided_at - s.created_at)::float8 AS seconds
    FROM scope s JOIN approval_votes v ON v.approval_id = s.id, bounds
    WHERE v.decided_at >= lo AND v.decided_at < hi
    UNION ALL
    SELECT s.decided_by, s.decision, s.seconds
    FROM scope s, bounds
    WHERE s.decided_by IS NOT NULL AND s.decided_at >= lo AND s.decided_at < hi
      AND (s.decision IN ('revised', 'skipped')
           OR (s.decision = 'approved' AND NOT EXISTS (
                   SELECT 1 FROM approval_votes v
                   WHERE v.approval_id = s.id AND v.person_key = lower(btrim(s.decided_by)))))
),
counted AS (
    SELECT CASE GROUPING(capability) WHEN 0 THEN 'capability' ELSE 'total' END AS scope,
           capability, NULL::text AS person,
           count(*) FILTER (WHERE kind = 'asked') AS requests,
           count(*) FILTER (WHERE kind = 'approved') AS approved,
           count(*) FILTER (WHERE kind = 'revised') AS revised,
           count(*) FILTER (WHERE kind = 'skipped') AS skipped,
           count(*) FILTER (WHERE kind = 'expired') AS expired,
           count(*) FILTER (WHERE kind = 'reminded') AS reminded,
           count(*) FILTER (WHERE kind = 'escalated') AS escalated,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90,
           max(seconds) AS top
    FROM requests
    GROUP BY GROUPING SETS ((capability), ())
    UNION ALL
    SELECT 'person', NULL, min(person), NULL,
           count(*) FILTER (WHERE kind = 'approved'),
           count(*) FILTER (WHERE kind = 'revised'),
           count(*) FILTER (WHERE kind = 'skipped'),
           NULL, NULL, NULL,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds),
           percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds),
           max(seconds)
    FROM answers GROUP BY lower(btrim(person))
)
SELECT scope, capability, person, requests, approved, revised, skipped, expired,
       reminded, escalated,
       round(p50::numeric, 3)::float8 AS p50_seconds,
       round(p90::numeric, 3)::float8 AS p90_seconds,
       round(top::numeric, 3)::float8 AS max_seconds
FROM counted
ORDER BY CASE scope WHEN 'capability' THEN 0 WHEN 'person' THEN 1 ELSE 2 END,
         capability, person
"""

PEOPLE = ("alice", "bob", "carol", "dave", "erin")
# How each request ends; None: still open.
OUTCOMES = ("approved", "approved", "four_eyes", "four_eyes_open", "revised", "skipped",
            "expired", None)


async def _park_all(queue: TaskQueue, rng: random.Random) -> list[tuple[int, str | None]]:
    """Forty parked requests over three capabilities, each with the outcome it will get;
    parked first, as a decided task would be claimed ahead of the next one."""
    parked_ids = []
    for n in range(40):
        capability = ("deploy", "mail", "ops")[n % 3]
        outcome = OUTCOMES[rng.randrange(len(OUTCOMES))]
        required = 2 if outcome and outcome.startswith("four_eyes") else None
        _, approval = await parked(queue, capability, required_approvals=required)
        parked_ids.append((approval.id, outcome))
    return parked_ids


async def _decide(queue: TaskQueue, rng: random.Random,
                  requests: list[tuple[int, str | None]]) -> None:
    """Each request's outcome, through the API (the reaper for expiries)."""
    for approval_id, outcome in requests:
        first, second = rng.sample(PEOPLE, 2)
        if outcome in ("approved", "four_eyes", "four_eyes_open"):
            await queue.approval_decide(approval_id, Decision.APPROVED, first)
        if outcome == "four_eyes":
            await queue.approval_decide(approval_id, Decision.APPROVED, second)
        if outcome in ("revised", "skipped"):
            await queue.approval_decide(approval_id, Decision(outcome), first, note="again")
        if outcome == "expired":
            await sql(queue, "UPDATE approvals SET expires_at = now() - interval '1 s' "
                             "WHERE id = %s", approval_id)
    await Reaper(queue).run_once()


async def _ask_again(queue: TaskQueue) -> None:
    """An answered request's task claimed back and parked again: two approvals, one task."""
    task = await queue.task_claim("deploy", "w1")
    assert task is not None
    await queue.task_park(task.id, "w1", "Shorter now?", claim=task.claim)


async def _retime(queue: TaskQueue, rng: random.Random) -> None:
    """Every request asked 0 to 30 days ago, settled 1 s to 4 days later; every vote cast
    between the two (or before now, for an open request); microseconds everywhere."""
    for a in await sql(queue, "SELECT id, decided_at IS NOT NULL AS settled FROM approvals"):
        asked_days = rng.uniform(0.5, 30)
        took = rng.uniform(1, 4 * 86400) if a["settled"] else None
        await sql(queue, """
            UPDATE approvals SET created_at = now() - make_interval(secs => %s),
                decided_at = CASE WHEN decided_at IS NOT NULL
                    THEN now() - make_interval(secs => %s) + make_interval(secs => %s) END
            WHERE id = %s""", asked_days * 86400, asked_days * 86400, took or 0, a["id"])
        for vote in await sql(queue, "SELECT person_key FROM approval_votes "
                                     "WHERE approval_id = %s", a["id"]):
            await sql(queue, """
                UPDATE approval_votes v SET decided_at = a.created_at + make_interval(
                    secs => %s * EXTRACT(EPOCH FROM COALESCE(a.decided_at, now())
                                                    - a.created_at)::float8)
                FROM approvals a
                WHERE a.id = v.approval_id AND v.approval_id = %s AND v.person_key = %s""",
                      rng.random(), a["id"], vote["person_key"])


async def _odd_rows(queue: TaskQueue) -> None:
    """What the API does not write but a database may hold: spellings of one person, an
    approve older than the votes table, a decider without a vote of their own, an
    uncounted approve, reminders sent days apart, and one event whose approval has no mark."""
    await sql(queue, "UPDATE approval_votes SET person = upper(person) "
                     "WHERE person = 'alice' AND approval_id % 2 = 0")
    await sql(queue, "UPDATE approval_votes SET person = ' ' || person || ' ' "
                     "WHERE person = 'bob' AND approval_id % 3 = 0")
    await sql(queue, "UPDATE approvals SET decided_by = 'Carol ' "
                     "WHERE decided_by = 'carol' AND id % 2 = 1")
    [older] = await sql(queue, "SELECT min(id) AS id FROM approvals a WHERE decision = "
                               "'approved' AND required = 1")
    await sql(queue, "DELETE FROM approval_votes WHERE approval_id = %s", older["id"])
    await sql(queue, "UPDATE approvals SET decided_by = 'frank' WHERE id = (SELECT max(id) "
                     "FROM approvals WHERE decision = 'approved' AND required = 1)")
    await sql(queue, "UPDATE approval_votes SET counts = false WHERE approval_id = "
                     "(SELECT max(approval_id) FROM approval_votes)")
    marked = await sql(queue, "SELECT id, task_id, created_at FROM approvals "
                              "WHERE reminded_at IS NOT NULL ORDER BY id")
    for n, a in enumerate(marked):
        await sql(queue, """
            INSERT INTO task_events (task_id, at, kind, actor, detail)
            VALUES (%s, %s::timestamptz + make_interval(hours => %s), %s, 'reminders',
                    jsonb_build_object('approval_id', %s::bigint))""",
                  a["task_id"], a["created_at"], n, ("reminded", "escalated")[n % 2], a["id"])
    await sql(queue, """
        INSERT INTO task_events (task_id, at, kind, actor, detail)
        SELECT task_id, created_at, 'reminded', 'reminders', jsonb_build_object('approval_id', id)
        FROM approvals WHERE reminded_at IS NULL AND escalated_at IS NULL LIMIT 1""")


@pytest.fixture
async def history(queue: TaskQueue) -> TaskQueue:
    rng = random.Random(44)
    await queue.capability_set("deploy", remind_after_seconds=60, escalate_after_seconds=3600,
                               escalate_to=["carol"])
    await queue.capability_set("mail", remind_after_seconds=60)
    requests = await _park_all(queue, rng)
    # Unanswered for two hours: reminded (deploy's and mail's), escalated (deploy's).
    await sql(queue, "UPDATE approvals SET created_at = now() - interval '2 hours'")
    await Reminders(queue).run_once()
    await _decide(queue, rng, requests)
    await _ask_again(queue)
    await _retime(queue, rng)
    await _odd_rows(queue)
    return queue


async def _reference(queue: TaskQueue, params: dict[str, Any]) -> list[dict[str, Any]]:
    async with queue.pool.connection() as conn:
        return await (await conn.execute(REFERENCE, params)).fetchall()


async def test_every_row_and_figure_is_the_earlier_querys(history: TaskQueue) -> None:
    [now] = await sql(history, "SELECT now() AS at")
    day = timedelta(days=1)
    windows: list[tuple[datetime | None, datetime | None]] = [
        (None, None), (now["at"] - 10 * day, None), (None, now["at"] - 10 * day),
        (now["at"] - 20 * day, now["at"] - 5 * day), (now["at"] - 2 * day, now["at"] - day),
        (now["at"] + day, None)]
    for capability in (None, "deploy", "mail", "nothing.here"):
        for since, until in windows:
            params = {"since": since, "until": until, "capability": capability}
            got = [dataclasses.asdict(r) for r in await history.decision_stats(
                since=since, until=until, capability=capability)]
            assert got == await _reference(history, params), params


async def test_the_history_has_every_kind_of_row(history: TaskQueue) -> None:
    rows = await history.decision_stats()
    [total] = [r for r in rows if r.scope == "total"]
    assert min(total.approved, total.revised, total.skipped, total.expired or 0,
               total.reminded or 0, total.escalated or 0) > 0
    assert len([r for r in rows if r.scope == "capability"]) == 3
    people = {r.person.strip().lower() for r in rows if r.scope == "person" and r.person}
    assert people >= {"alice", "bob", "carol", "frank"}


async def test_decision_stats_leaves_the_connections_settings_as_they_were(
        queue: TaskQueue) -> None:
    [before] = await sql(queue, "SELECT current_setting('jit') AS jit, "
                                "current_setting('work_mem') AS work_mem")
    await queue.decision_stats()
    for _ in range(3):  # whichever connection of the pool
        assert await sql(queue, "SELECT current_setting('jit') AS jit, "
                                "current_setting('work_mem') AS work_mem") == [before]
