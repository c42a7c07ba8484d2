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
-- earlier form and checks that both give the same rows): each part reads the tables
-- straight, so the planner estimates each scan and runs it in parallel (a shared CTE of the
-- window's approvals made it guess, spill the CTE to disk and probe approval_votes once per
-- approve); an approval's capability is its own column (migration 0029), so no task is
-- read; an approval is one row of `requests` with its asked and settled marks; each
-- percentile pair is one sort (percentile_cont over an array); the approves without a vote
-- are a hashed anti-join of their own. 4.0 s → 1.8 s at a million decisions. The window's
-- bounds are written in place, not read from a CTE, so that each is a constant in the plan
-- (AnalyticsMixin runs this unprepared, without JIT) and a narrow window keeps its
-- estimates.
WITH requests AS (
    -- An approval asked or settled in the window, with those two marks (settled is NULL for
    -- an open approval, so settled_as is NULL outside the window).
    SELECT capability, asked, CASE WHEN settled THEN decision END AS settled_as,
           CASE WHEN settled AND decision <> 'expired' THEN seconds END AS seconds,
           NULL::text AS sent
    FROM (SELECT a.capability, a.decision,
                 a.created_at >= COALESCE(%(since)s::timestamptz, '-infinity')
                   AND a.created_at < COALESCE(%(until)s::timestamptz, 'infinity') AS asked,
                 a.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
                   AND a.decided_at < COALESCE(%(until)s::timestamptz, 'infinity') AS settled,
                 EXTRACT(EPOCH FROM a.decided_at - a.created_at)::float8 AS seconds
          FROM approvals a
          WHERE (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)) w
    WHERE asked OR settled
    UNION ALL
    -- The marks on the approval narrow the events read to the few reminded or escalated
    -- requests' (task_events has no index on kind; it has one on task_id).
    SELECT a.capability, false, NULL, NULL, e.kind
    FROM approvals a JOIN task_events e ON e.task_id = a.task_id
    WHERE (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
      AND (a.reminded_at IS NOT NULL OR a.escalated_at IS NOT NULL)
      AND e.kind IN ('reminded', 'escalated') AND e.detail->>'approval_id' = a.id::text
      AND e.at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND e.at < COALESCE(%(until)s::timestamptz, 'infinity')
),
answers AS (
    SELECT v.person, 'approved' AS kind,
           EXTRACT(EPOCH FROM v.decided_at - a.created_at)::float8 AS seconds
    FROM approval_votes v JOIN approvals a ON a.id = v.approval_id
    WHERE v.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND v.decided_at < COALESCE(%(until)s::timestamptz, 'infinity')
      AND (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
    UNION ALL
    SELECT a.decided_by, a.decision,
           EXTRACT(EPOCH FROM a.decided_at - a.created_at)::float8
    FROM approvals a
    WHERE a.decided_by IS NOT NULL AND a.decision IN ('revised', 'skipped')
      AND a.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND a.decided_at < COALESCE(%(until)s::timestamptz, 'infinity')
      AND (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
    UNION ALL
    SELECT a.decided_by, a.decision,
           EXTRACT(EPOCH FROM a.decided_at - a.created_at)::float8
    FROM approvals a
    WHERE a.decided_by IS NOT NULL AND a.decision = 'approved'
      AND a.decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND a.decided_at < COALESCE(%(until)s::timestamptz, 'infinity')
      AND (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
      AND NOT EXISTS (SELECT 1 FROM approval_votes v
                      WHERE v.approval_id = a.id AND v.person_key = lower(btrim(a.decided_by)))
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
