-- Analytics: how people answer the questions (reads only). Named blocks, loaded once with
-- every .sql file here by taskqueue/store/queries.py; the TaskQueue method that runs a
-- query has its name (taskqueue/store/analytics.py, and metrics_read for the metrics_*).

-- name: decision_stats
-- Per capability, per person and in total, over a window [since, until) (NULL: unbounded).
-- The capability and total rows count requests: `requests` are approvals asked in the
-- window; approved/revised/skipped/expired are approvals settled in the window, and their
-- time to decide is decided_at - created_at of the approved, revised and skipped ones (an
-- expiry is nobody's decision); reminded/escalated are the reminders and escalations sent
-- in the window (their task events, taskqueue/maintenance/reminders.py).
-- A person's row counts that person's answers: one approve per vote in approval_votes (every
-- person of a four-eyes approve, each timed from the request to their own vote; also one
-- not counted toward `required` and one on a request later skipped or still open), plus the
-- revises and skips decided in their name. An approve older than the votes table (decided_by
-- without a vote) is decided_by's. Requests, expiries, reminders and escalations belong to
-- no person, so a person's row reports them as NULL.
-- Percentiles are percentile_cont: the linear interpolation between the two nearest times,
-- the convention of a hand-computed median (the mean of the middle two of an even count) and
-- of numpy/Prometheus-style quantiles; percentile_disc would report the lower of the two and
-- jump as single rows arrive. They are rounded to the millisecond, so the float
-- arithmetic's last digit (420.0000000000001) never shows and a hand-computed figure
-- matches exactly.
-- How it reads (issue 44; tests/taskqueue/store/test_analytics_reference.py keeps the
-- earlier form and checks that both give the same rows): an approval's capability is its
-- own column (migration 0029), so no task is read; an approval is one row of `requests`
-- with its asked and settled marks, not one row per reading; each percentile pair is one
-- sort (percentile_cont over an array); an approve without a vote is found by an anti-join
-- of its own, not a probe per approve. The window's bounds are
-- written in place, not read from a CTE, so that each is a constant in the plan
-- (AnalyticsMixin runs this unprepared, without JIT) and a narrow window keeps its
-- estimates.
WITH scope AS (
    -- The approvals the window touches: asked or settled in it, marked (their events are
    -- checked below), or answered in it (a vote on a request asked and settled outside).
    SELECT a.id, a.task_id, a.created_at, a.decision, a.decided_by,
           a.reminded_at, a.escalated_at, a.capability,
           a.created_at >= COALESCE(%(since)s::timestamptz, '-infinity')
             AND a.created_at < COALESCE(%(until)s::timestamptz, 'infinity') AS asked,
           a.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
             AND a.decided_at < COALESCE(%(until)s::timestamptz, 'infinity') AS settled,
           EXTRACT(EPOCH FROM a.decided_at - a.created_at)::float8 AS seconds
    FROM approvals a
    WHERE (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
      AND ((a.created_at >= COALESCE(%(since)s::timestamptz, '-infinity')
            AND a.created_at < COALESCE(%(until)s::timestamptz, 'infinity'))
           OR (a.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
               AND a.decided_at < COALESCE(%(until)s::timestamptz, 'infinity'))
           OR a.reminded_at IS NOT NULL OR a.escalated_at IS NOT NULL
           OR a.id IN (SELECT v.approval_id FROM approval_votes v
                       WHERE v.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
                         AND v.decided_at < COALESCE(%(until)s::timestamptz, 'infinity')))
),
requests AS (
    -- settled_as is NULL outside the window (settled is NULL for an open approval).
    SELECT capability, asked, CASE WHEN settled THEN decision END AS settled_as,
           CASE WHEN settled AND decision <> 'expired' THEN seconds END AS seconds,
           NULL::text AS sent
    FROM scope WHERE asked OR settled
    UNION ALL
    -- The marks on the approval narrow the events read to the few reminded or escalated
    -- requests' (task_events has no index on kind; it has one on task_id).
    SELECT s.capability, false, NULL, NULL, e.kind
    FROM scope s JOIN task_events e ON e.task_id = s.task_id
    WHERE (s.reminded_at IS NOT NULL OR s.escalated_at IS NOT NULL)
      AND e.kind IN ('reminded', 'escalated') AND e.detail->>'approval_id' = s.id::text
      AND e.at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND e.at < COALESCE(%(until)s::timestamptz, 'infinity')
),
answers AS (
    SELECT v.person, 'approved' AS kind,
           EXTRACT(EPOCH FROM v.decided_at - s.created_at)::float8 AS seconds
    FROM scope s JOIN approval_votes v ON v.approval_id = s.id
    WHERE v.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND v.decided_at < COALESCE(%(until)s::timestamptz, 'infinity')
    UNION ALL
    SELECT s.decided_by, s.decision, s.seconds
    FROM scope s
    WHERE s.decided_by IS NOT NULL AND s.settled AND s.decision IN ('revised', 'skipped')
    UNION ALL
    SELECT s.decided_by, s.decision, s.seconds
    FROM scope s
    WHERE s.decided_by IS NOT NULL AND s.settled AND s.decision = 'approved'
      AND NOT EXISTS (SELECT 1 FROM approval_votes v
                      WHERE v.approval_id = s.id AND v.person_key = lower(btrim(s.decided_by)))
),
counted AS (
    SELECT CASE GROUPING(capability) WHEN 0 THEN 'capability' ELSE 'total' END AS scope,
           capability, NULL::text AS person,
           count(*) FILTER (WHERE asked) AS requests,
           count(*) FILTER (WHERE settled_as = 'approved') AS approved,
           count(*) FILTER (WHERE settled_as = 'revised') AS revised,
           count(*) FILTER (WHERE settled_as = 'skipped') AS skipped,
           count(*) FILTER (WHERE settled_as = 'expired') AS expired,
           count(*) FILTER (WHERE sent = 'reminded') AS reminded,
           count(*) FILTER (WHERE sent = 'escalated') AS escalated,
           percentile_cont('{0.5,0.9}'::float8[]) WITHIN GROUP (ORDER BY seconds) AS pct,
           max(seconds) AS top
    FROM requests
    -- The () set makes the total row, one also when nothing happened.
    GROUP BY GROUPING SETS ((capability), ())
    UNION ALL
    -- One person whatever the case they were written in (issue 39): the first spelling shows.
    SELECT 'person', NULL, min(person), NULL,
           count(*) FILTER (WHERE kind = 'approved'),
           count(*) FILTER (WHERE kind = 'revised'),
           count(*) FILTER (WHERE kind = 'skipped'),
           NULL, NULL, NULL,
           percentile_cont('{0.5,0.9}'::float8[]) WITHIN GROUP (ORDER BY seconds),
           max(seconds)
    FROM answers GROUP BY lower(btrim(person))
)
SELECT scope, capability, person, requests, approved, revised, skipped, expired,
       reminded, escalated,
       round(pct[1]::numeric, 3)::float8 AS p50_seconds,
       round(pct[2]::numeric, 3)::float8 AS p90_seconds,
       round(top::numeric, 3)::float8 AS max_seconds
FROM counted
ORDER BY CASE scope WHEN 'capability' THEN 0 WHEN 'person' THEN 1 ELSE 2 END,
         capability, person;

-- name: metrics_decision_seconds
-- Cumulative bucket counts of the time to decide, per capability and decision, over every
-- decided approval still in the database (the pruner's audit_days bounds it).
SELECT a.capability, a.decision, b.le,
       count(*) FILTER (WHERE EXTRACT(EPOCH FROM a.decided_at - a.created_at) <= b.le)
           AS n,
       count(*) AS total,
       sum(EXTRACT(EPOCH FROM a.decided_at - a.created_at))::float8 AS seconds
FROM approvals a
CROSS JOIN unnest(%(buckets)s::float8[]) AS b(le)
WHERE a.decision IN ('approved', 'revised', 'skipped')
GROUP BY a.capability, a.decision, b.le
ORDER BY a.capability, a.decision, b.le;

-- name: metrics_approvals_expired
SELECT a.capability, count(*) AS n
FROM approvals a
WHERE a.decision = 'expired'
GROUP BY a.capability ORDER BY a.capability;
