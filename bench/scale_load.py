"""bench.scale's data: months of finished tasks, the decisions among them and the open
approvals, written straight into the migrated tables by INSERT … SELECT generate_series.

The rows are what the queue's own statements leave behind (taskqueue/store/sql: claim,
park, decide, complete, fail, cancel, the reaper's expiry, a channel's delivery), with
explicit ids so that each statement of a chunk finds its rows without reading any back:
finished task g has id g, its approval (if it asked) id k = g / step, open task j id
finished + j with approval decisions + j; an approval's request notification has the
approval's id and its closing one closings_base + k.

The session runs with session_replication_role = replica (superuser), so the approvals'
and votes' triggers and the foreign keys' checks do not run row by row: what those
triggers would have written (the notifications, and the web channel's deliveries with
their `notified` events, as if `signoff web` had been up all along, an approval's
capability, migration 0029's, and a vote's copy of its request's time and capability,
migration 0031's) is written here; the audit chain (one sha256 link a vote and a
decision, sequential by design) is left empty: no figure reads it. Every CHECK constraint
still holds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from bench.measure import execute
from bench.tables import VACUUMED

log = logging.getLogger("signoff.bench")

# One statement writes at most this many tasks (or their events), committed on its own.
CHUNK = 1_000_000
# The finished tasks span this many days before the load, the open approvals the last week.
HISTORY_DAYS = 60
WEB = "web"  # bot/web/channel.py's CHANNEL: the inbox owes nothing at its start
PEOPLE = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan",
          "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent",
          "victor", "walter", "web:yolanda")

# What finished task g is. One decided task in `step` (the first `decisions` of them):
# 75 % approved, 10 % revised, 10 % skipped, 5 % expired, each decided 5 s to an hour after
# it parked by one of PEOPLE in turn. The others: 90 % succeeded, 8 % failed (one attempt,
# max_attempts 1), 2 % cancelled before a claim. Capabilities by a hash of g, so each one
# gets its share of the decisions whatever the step.
_HISTORY = """
generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g,
LATERAL (SELECT g %% %(step)s = 0 AND g / %(step)s <= %(decisions)s AS decided,
                g / %(step)s AS k,
                %(t0)s::timestamptz - interval '1 hour'
                  - interval '1 day' * %(days)s * (1 - g::float8 / %(finished)s) AS ts) AS b,
LATERAL (SELECT CASE WHEN NOT b.decided THEN NULL WHEN b.k %% 20 < 15 THEN 'approved'
                     WHEN b.k %% 20 < 17 THEN 'revised' WHEN b.k %% 20 < 19 THEN 'skipped'
                     ELSE 'expired' END AS decision,
                b.ts + interval '2 seconds' AS parked_at,
                b.ts + make_interval(secs => 7 + (b.k * 7919) %% 3600) AS decided_at) AS d,
LATERAL (SELECT CASE WHEN d.decision IN ('approved', 'revised') THEN 'succeeded'
                     WHEN b.decided THEN d.decision
                     WHEN g %% 100 < 90 THEN 'succeeded' WHEN g %% 100 < 98 THEN 'failed'
                     ELSE 'cancelled' END AS status,
                (%(capabilities)s::text[])[1 + (hashint8(g)::bigint + 2147483648)
                                               %% cardinality(%(capabilities)s::text[])]
                  AS capability,
                (%(people)s::text[])[1 + b.k %% cardinality(%(people)s::text[])] AS person,
                CASE WHEN d.decision IN ('skipped', 'expired') THEN d.decided_at
                     WHEN b.decided THEN d.decided_at + interval '2 seconds'
                     ELSE b.ts + interval '2 seconds' END AS finished_at,
                CASE WHEN d.decision = 'expired' THEN d.decided_at
                     ELSE d.parked_at + interval '2 days' END AS expires_at,
                'Send report ' || g || '?' AS question,
                CASE WHEN d.decision = 'revised' THEN 'bench: say it in fewer words' END
                  AS note) AS f"""

_FINISHED_TASKS = f"""
INSERT INTO tasks (id, capability, status, payload, result, attempts, max_attempts,
                   last_error, run_after, created_at, first_claimed_at, finished_at,
                   updated_at, enqueued_event_id, enqueued_by)
SELECT g, f.capability, f.status,
       jsonb_build_object('i', g, 'to', 'user' || (g %% 50000) || '@example.com'),
       CASE WHEN f.status = 'succeeded' THEN '{{}}'::jsonb END,
       CASE WHEN f.status = 'failed' THEN 1 ELSE 0 END,
       CASE WHEN f.status = 'failed' THEN 1 ELSE 3 END,
       CASE WHEN f.status = 'failed' THEN 'bench: the handler failed' END,
       CASE WHEN b.decided THEN d.decided_at ELSE b.ts END, b.ts,
       CASE WHEN f.status <> 'cancelled' THEN b.ts + interval '1 second' END,
       f.finished_at, f.finished_at, nextval('task_events_id_seq'), 'bench'
FROM {_HISTORY}"""

# A claim's event as signoff_claim writes it.
_CLAIMED = """jsonb_build_object('from', {from_}, 'to', 'running', 'claim', gen_random_uuid(),
                          'lease_expires_at', {at} + interval '300 seconds')"""
_NOTIFIED = """jsonb_build_object('notification_id', {id}, 'kind', {kind}, 'channel', 'web',
                          'approval_id', b.k)"""
_COMPLETED = """'{"from": "running", "to": "succeeded"}'::jsonb"""

# Each task's events in the order they happened; a row is written when its first column
# holds (NULL, for an undecided task's decision, is not true).
_FINISHED_EVENTS = f"""
INSERT INTO task_events (task_id, at, kind, actor, detail)
SELECT g, e.at, e.kind, e.actor, e.detail
FROM {_HISTORY},
LATERAL (VALUES
  (f.status <> 'cancelled', b.ts + interval '1 second', 'claimed', 'bench-worker',
   {_CLAIMED.format(from_="'pending'", at="b.ts")}),
  (f.status = 'cancelled', f.finished_at, 'cancelled', 'bench-operator',
   '{{"from": "pending", "to": "cancelled"}}'::jsonb),
  (f.status = 'failed', f.finished_at, 'failed', 'bench-worker',
   jsonb_build_object('from', 'running', 'to', 'failed', 'error', 'bench: the handler failed',
                      'attempts', 1, 'retry_at', NULL, 'traceback', NULL)),
  (NOT b.decided AND f.status = 'succeeded', f.finished_at, 'completed', 'bench-worker',
   {_COMPLETED}),
  (b.decided, d.parked_at, 'parked', 'bench-worker',
   jsonb_build_object('from', 'running', 'to', 'needs_approval', 'approval_id', b.k,
                      'question', f.question, 'expires_at', f.expires_at)),
  (b.decided, d.parked_at + interval '1 second', 'notified', 'web',
   {_NOTIFIED.format(id="b.k", kind="'approval_request'")}),
  (d.decision <> 'expired', d.decided_at, 'decided', f.person,
   jsonb_build_object('from', 'needs_approval',
                      'to', CASE d.decision WHEN 'skipped' THEN 'skipped' ELSE 'approved' END,
                      'decision', d.decision, 'approval_id', b.k, 'note', f.note)),
  (d.decision = 'expired', d.decided_at, 'expired', 'reaper',
   jsonb_build_object('from', 'needs_approval', 'to', 'expired', 'approval_id', b.k)),
  (b.decided, d.decided_at + interval '1 second', 'notified', 'web',
   {_NOTIFIED.format(id="%(closings_base)s + b.k", kind="'approval_closed'")}),
  (d.decision IN ('approved', 'revised'), d.decided_at + interval '1 second', 'claimed',
   'bench-worker', {_CLAIMED.format(from_="'approved'", at="d.decided_at")}),
  (d.decision IN ('approved', 'revised'), f.finished_at, 'completed', 'bench-worker',
   {_COMPLETED})
) AS e(wanted, at, kind, actor, detail)
WHERE e.wanted"""

_DECIDED_APPROVALS = f"""
INSERT INTO approvals (id, task_id, capability, question, created_at, expires_at, decision,
                       decided_by, decided_at, note)
SELECT b.k, g, f.capability, f.question, d.parked_at, f.expires_at, d.decision,
       CASE WHEN d.decision <> 'expired' THEN f.person END, d.decided_at, f.note
FROM {_HISTORY}
WHERE b.decided"""

# An approve is a counted vote of its person (decision_vote_insert); a revise discards the
# votes and a skip has none. Its time from the request and the request's capability are
# what migration 0031's trigger copies from the approval.
_VOTES = f"""
INSERT INTO approval_votes (approval_id, person, person_key, decided_at, seconds, capability)
SELECT b.k, f.person, lower(btrim(f.person)), d.decided_at,
       EXTRACT(EPOCH FROM d.decided_at - d.parked_at)::float8, f.capability
FROM {_HISTORY}
WHERE d.decision = 'approved'"""

_DECIDED_NOTIFICATIONS = f"""
INSERT INTO notifications (id, kind, task_id, approval_id, body, created_at)
SELECT n.id, n.kind, g, b.k, n.body, n.at
FROM {_HISTORY},
LATERAL (VALUES (b.k, 'approval_request', '{{}}'::jsonb, d.parked_at),
                (%(closings_base)s + b.k, 'approval_closed',
                 jsonb_build_object('outcome', d.decision), d.decided_at)
) AS n(id, kind, body, at)
WHERE b.decided"""

# The web channel's receipt of each of a chunk's notifications (notification_mark_delivered).
_DELIVERIES = """
INSERT INTO notification_deliveries (notification_id, channel, attempts, next_attempt_at,
                                     delivered_at, receipt)
SELECT n.id, 'web', 1, n.created_at, n.created_at + interval '1 second', '{"pages": 0}'
FROM notifications n
WHERE n.task_id BETWEEN %(first_task)s AND %(last_task)s"""

# Open approval j: a task parked within the last week (oldest first), its approval open for
# 30 days more, its request shaped like a job application's (bench/web_inbox.py's).
_OPEN = """
generate_series(%(lo)s::bigint, %(hi)s::bigint) AS j,
LATERAL (SELECT %(finished)s + j AS task_id, %(decisions)s + j AS approval_id,
                %(t0)s::timestamptz - interval '10 seconds'
                  - interval '7 days' * (1 - j::float8 / %(open)s) AS ts,
                (%(capabilities)s::text[])[1 + j %% cardinality(%(capabilities)s::text[])]
                  AS capability,
                'Send the application ' || j || '?' AS question,
                %(t0)s::timestamptz + interval '30 days' AS expires_at) AS o"""

_OPEN_TASKS = f"""
INSERT INTO tasks (id, capability, status, payload, run_after, created_at, first_claimed_at,
                   updated_at, enqueued_event_id, enqueued_by)
SELECT o.task_id, o.capability, 'needs_approval', jsonb_build_object('n', j), o.ts, o.ts,
       o.ts + interval '1 second', o.ts + interval '2 seconds',
       nextval('task_events_id_seq'), 'bench'
FROM {_OPEN}"""

_OPEN_EVENTS = f"""
INSERT INTO task_events (task_id, at, kind, actor, detail)
SELECT o.task_id, e.at, e.kind, e.actor, e.detail
FROM {_OPEN},
LATERAL (VALUES
  (o.ts + interval '1 second', 'claimed', 'bench-worker',
   {_CLAIMED.format(from_="'pending'", at="o.ts")}),
  (o.ts + interval '2 seconds', 'parked', 'bench-worker',
   jsonb_build_object('from', 'running', 'to', 'needs_approval',
                      'approval_id', o.approval_id, 'question', o.question,
                      'expires_at', o.expires_at)),
  (o.ts + interval '3 seconds', 'notified', 'web',
   jsonb_build_object('notification_id', o.approval_id, 'kind', 'approval_request',
                      'channel', 'web', 'approval_id', o.approval_id))
) AS e(at, kind, actor, detail)"""

_OPEN_APPROVALS = f"""
INSERT INTO approvals (id, task_id, capability, question, request, created_at, expires_at)
SELECT o.approval_id, o.task_id, o.capability, o.question,
       jsonb_build_object(
           'kind', 'job_application', 'role', 'Engineer ' || j, 'company', 'Acme',
           'url', 'https://jobs.example/' || j, 'score', j %% 100, 'score_max', 100,
           'fields', (SELECT jsonb_agg(jsonb_build_object(
                                 'field', 'Question ' || q,
                                 'value', 'Answer ' || q || ' to posting ' || j) ORDER BY q)
                      FROM generate_series(0, 7) AS q)),
       o.ts + interval '2 seconds', o.expires_at
FROM {_OPEN}"""

_OPEN_NOTIFICATIONS = f"""
INSERT INTO notifications (id, kind, task_id, approval_id, created_at)
SELECT o.approval_id, 'approval_request', o.task_id, o.approval_id, o.ts + interval '2 seconds'
FROM {_OPEN}"""

_CHANNEL = """
INSERT INTO notification_channels (name, registered_at)
VALUES (%(channel)s, %(t0)s::timestamptz - interval '1 day' * (%(days)s + 1))"""

_SEQUENCES = """
SELECT setval('tasks_id_seq', %(tasks)s), setval('approvals_id_seq', %(approvals)s),
       setval('notifications_id_seq', %(notifications)s)"""

_COUNTS = """
SELECT count(*) FILTER (WHERE status IN ('succeeded', 'failed', 'skipped', 'expired',
                                         'cancelled')) AS finished,
       count(*) FILTER (WHERE status = 'needs_approval') AS parked,
       (SELECT count(*) FROM approvals WHERE decision IS NOT NULL) AS decided,
       (SELECT count(*) FROM approvals WHERE decision IS NULL) AS open,
       (SELECT count(*) FROM approval_votes) AS votes,
       (SELECT count(*) FROM notification_deliveries WHERE delivered_at IS NULL) AS owed
FROM tasks"""

_SIZES = """
SELECT c.relname AS name, c.reltuples::bigint AS rows,
       pg_total_relation_size(c.oid) AS bytes,
       pg_size_pretty(pg_total_relation_size(c.oid)) AS size
FROM pg_class c
WHERE c.relname = ANY(%(tables)s) AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
ORDER BY pg_total_relation_size(c.oid) DESC"""


@dataclass(frozen=True)
class Sizes:
    """How much to load: finished tasks, decided approvals among them, open approvals."""

    finished: int
    decisions: int
    open: int
    capabilities: Sequence[str]

    @property
    def step(self) -> int:
        return max(1, self.finished // self.decisions)


def chunks(count: int, size: int = CHUNK) -> list[tuple[int, int]]:
    """1-based inclusive ranges of at most `size` covering 1..count."""
    return [(lo, min(lo + size - 1, count)) for lo in range(1, count + 1, size)]


async def _run(conn: psycopg.AsyncConnection[Any], statements: Sequence[str],
               params: dict[str, Any]) -> float:
    """Each statement in its own transaction (autocommit); seconds taken."""
    started = time.perf_counter()
    for statement in statements:
        await conn.execute(statement, params)
    return time.perf_counter() - started


async def _write(dsn: str, sizes: Sizes, t0: datetime) -> dict[str, float]:
    """Every row, chunk by chunk, on one replica-mode session; seconds per part."""
    base = {"t0": t0, "days": HISTORY_DAYS, "finished": sizes.finished,
            "decisions": sizes.decisions, "open": sizes.open, "step": sizes.step,
            "capabilities": list(sizes.capabilities), "people": list(PEOPLE),
            "closings_base": sizes.decisions + sizes.open, "channel": WEB}
    spent = {"finished_tasks": 0.0, "finished_events": 0.0, "decisions": 0.0, "open": 0.0}
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("SET session_replication_role = replica")
        await conn.execute(_CHANNEL, base)
        for lo, hi in chunks(sizes.finished):
            p = base | {"lo": lo, "hi": hi, "first_task": lo, "last_task": hi}
            spent["finished_tasks"] += await _run(conn, [_FINISHED_TASKS], p)
            spent["finished_events"] += await _run(conn, [_FINISHED_EVENTS], p)
            spent["decisions"] += await _run(conn, [_DECIDED_APPROVALS, _VOTES,
                                                    _DECIDED_NOTIFICATIONS, _DELIVERIES], p)
            log.info("finished tasks %d to %d written, %.0f s so far", lo, hi,
                     sum(spent.values()))
        for lo, hi in chunks(sizes.open):
            p = base | {"lo": lo, "hi": hi, "first_task": sizes.finished + lo,
                        "last_task": sizes.finished + hi}
            spent["open"] += await _run(conn, [_OPEN_TASKS, _OPEN_EVENTS, _OPEN_APPROVALS,
                                               _OPEN_NOTIFICATIONS, _DELIVERIES], p)
        await conn.execute(_SEQUENCES, {
            "tasks": sizes.finished + sizes.open,
            "approvals": sizes.decisions + sizes.open,
            "notifications": sizes.decisions * 2 + sizes.open})
    return {k: round(v, 1) for k, v in spent.items()}


async def table_report(dsn: str) -> list[dict[str, Any]]:
    """Each loaded table's rows (the planner's count, after ANALYZE) and total size."""
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cur = await conn.execute(_SIZES, {"tables": list(VACUUMED)})
        names = [c.name for c in cur.description or []]
        return [dict(zip(names, row, strict=True)) for row in await cur.fetchall()]


async def load(dsn: str, sizes: Sizes, *, checkpoint: bool) -> dict[str, Any]:
    """Write the rows, VACUUM (ANALYZE) as autovacuum eventually would, CHECKPOINT
    (server-wide, so optional) so the figures do not pay for writing the load out; the
    time of each part, the exact counts and the tables' sizes."""
    if sizes.decisions > sizes.finished:
        raise SystemExit("--decisions cannot exceed --finished: each decided task is one")
    t0 = (await execute(dsn, "SELECT now() AS t"))["t"]
    started = time.perf_counter()
    parts = await _write(dsn, sizes, t0)
    vacuum_started = time.perf_counter()
    await execute(dsn, "VACUUM (ANALYZE) " + ", ".join(VACUUMED))
    parts["vacuum_analyze"] = round(time.perf_counter() - vacuum_started, 1)
    if checkpoint:
        checkpoint_started = time.perf_counter()
        await execute(dsn, "CHECKPOINT")
        parts["checkpoint"] = round(time.perf_counter() - checkpoint_started, 1)
    seconds = round(time.perf_counter() - started, 1)
    counts = await execute(dsn, _COUNTS)
    return {"seconds": seconds, "parts_seconds": parts, "chunk_rows": CHUNK,
            "history_days": HISTORY_DAYS, "decided_every": sizes.step,
            "counts": counts, "tables": await table_report(dsn),
            "complete": counts == {"finished": sizes.finished, "parked": sizes.open,
                                   "decided": sizes.decisions, "open": sizes.open,
                                   "votes": counts["votes"], "owed": 0},
            "audit_chain": "left empty: no figure reads it (see bench/scale_load.py)"}
