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
-- no person, so a person's row reports them as NULL. A person is lower(btrim()) of the name
-- written; the first spelling shows.
-- Percentiles are percentile_cont: the linear interpolation between the two nearest times,
-- the convention of a hand-computed median (the mean of the middle two of an even count) and
-- of numpy/Prometheus-style quantiles; percentile_disc would report the lower of the two and
-- jump as single rows arrive. Its 1.0 is the max. They are rounded to the millisecond, so
-- the float arithmetic's last digit (420.0000000000001) never shows and a hand-computed
-- figure matches exactly.
-- How it reads (issue 44; tests/taskqueue/store/test_analytics_reference.py keeps the
-- earlier form and checks that both give the same rows): the times are on the rows
-- (migration 0031) and indexed by (group, time), so each capability's and the total's times
-- are one index range read alone, arriving sorted (the percentile's sort then only checks
-- the order), and a person's two (their votes, their other decisions), each sorted. The
-- groups are found by skipping through those indexes, one probe a capability or a person.
-- 2.3 s → 0.5 s at a million decisions, no join and no anti-join. The window's bounds
-- are compared by signoff_within (migration 0031), an SQL function the planner writes in
-- place: a bound that is NULL folds to true, so an unbounded report compares nothing
-- (AnalyticsMixin runs this unprepared, so the bounds are constants, and without JIT).
WITH RECURSIVE capabilities AS (
    SELECT min(capability) AS capability FROM approvals
    UNION ALL
    SELECT (SELECT min(a.capability) FROM approvals a WHERE a.capability > c.capability)
    FROM capabilities c WHERE c.capability IS NOT NULL
),
sent AS (
    -- The approval's marks narrow the events read to the few reminded or escalated
    -- requests' (task_events has no index on kind; it has one on task_id).
    SELECT a.capability, count(*) FILTER (WHERE e.kind = 'reminded') AS reminded,
           count(*) FILTER (WHERE e.kind = 'escalated') AS escalated
    FROM approvals a JOIN task_events e ON e.task_id = a.task_id
    WHERE (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
      AND (a.reminded_at IS NOT NULL OR a.escalated_at IS NOT NULL)
      AND e.kind IN ('reminded', 'escalated') AND e.detail->>'approval_id' = a.id::text
      AND signoff_within(e.at, %(since)s, %(until)s)
    GROUP BY a.capability
),
per_capability AS (
    SELECT c.capability, r.requests, r.approved, r.revised, r.skipped, r.expired,
           COALESCE(s.reminded, 0) AS reminded, COALESCE(s.escalated, 0) AS escalated, r.pct
    FROM capabilities c
    CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE a.asked) AS requests,
               count(*) FILTER (WHERE a.settled AND a.decision = 'approved') AS approved,
               count(*) FILTER (WHERE a.settled AND a.decision = 'revised') AS revised,
               count(*) FILTER (WHERE a.settled AND a.decision = 'skipped') AS skipped,
               count(*) FILTER (WHERE a.settled AND a.decision = 'expired') AS expired,
               percentile_cont('{0.5,0.9,1}'::float8[]) WITHIN GROUP (ORDER BY a.decide_seconds)
                   FILTER (WHERE a.settled AND a.decision IN ('approved', 'revised', 'skipped'))
                   AS pct
        FROM (SELECT a.decision, a.decide_seconds,
                     signoff_within(a.created_at, %(since)s, %(until)s) AS asked,
                     signoff_within(a.decided_at, %(since)s, %(until)s) AS settled
              FROM approvals a WHERE a.capability = c.capability) a) r
    LEFT JOIN sent s ON s.capability = c.capability
    WHERE c.capability IS NOT NULL
      AND (%(capability)s::text IS NULL OR c.capability = %(capability)s::text)
      AND r.requests + r.approved + r.revised + r.skipped + r.expired
          + COALESCE(s.reminded, 0) + COALESCE(s.escalated, 0) > 0
),
total AS (
    SELECT percentile_cont('{0.5,0.9,1}'::float8[]) WITHIN GROUP (ORDER BY a.decide_seconds)
               AS pct
    FROM approvals a
    WHERE a.decision IN ('approved', 'revised', 'skipped')
      AND (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
      AND signoff_within(a.decided_at, %(since)s, %(until)s)
),
voters AS (
    SELECT min(lower(btrim(person))) AS person FROM approval_votes
    UNION ALL
    SELECT (SELECT min(lower(btrim(v.person))) FROM approval_votes v
            WHERE lower(btrim(v.person)) > w.person)
    FROM voters w WHERE w.person IS NOT NULL
),
deciders AS (
    SELECT min(lower(btrim(decided_by))) AS person FROM approvals
    WHERE decided_by IS NOT NULL AND (decision IN ('revised', 'skipped') OR decided_without_vote)
    UNION ALL
    SELECT (SELECT min(lower(btrim(a.decided_by))) FROM approvals a
            WHERE a.decided_by IS NOT NULL
              AND (a.decision IN ('revised', 'skipped') OR a.decided_without_vote)
              AND lower(btrim(a.decided_by)) > d.person)
    FROM deciders d WHERE d.person IS NOT NULL
),
per_person AS (
    SELECT r.* FROM (SELECT person FROM voters UNION SELECT person FROM deciders) k
    CROSS JOIN LATERAL (
        SELECT min(x.person) AS person,
               count(*) FILTER (WHERE x.kind = 'approved') AS approved,
               count(*) FILTER (WHERE x.kind = 'revised') AS revised,
               count(*) FILTER (WHERE x.kind = 'skipped') AS skipped,
               percentile_cont('{0.5,0.9,1}'::float8[]) WITHIN GROUP (ORDER BY x.seconds)
                   AS pct
        FROM (SELECT v.person, 'approved' AS kind, v.seconds FROM approval_votes v
              WHERE lower(btrim(v.person)) = k.person
                AND signoff_within(v.decided_at, %(since)s, %(until)s)
                AND (%(capability)s::text IS NULL OR v.capability = %(capability)s::text)
              UNION ALL
              -- An approve without the decider's vote is an approve (decided_without_vote).
              SELECT a.decided_by, a.decision, a.decide_seconds FROM approvals a
              WHERE lower(btrim(a.decided_by)) = k.person AND a.decided_by IS NOT NULL
                AND (a.decision IN ('revised', 'skipped') OR a.decided_without_vote)
                AND signoff_within(a.decided_at, %(since)s, %(until)s)
                AND (%(capability)s::text IS NULL OR a.capability = %(capability)s::text)
             ) x) r
    WHERE k.person IS NOT NULL AND r.person IS NOT NULL
),
counted AS (
    SELECT 'capability' AS scope, capability, NULL::text AS person, requests, approved,
           revised, skipped, expired, reminded, escalated, pct
    FROM per_capability
    UNION ALL
    SELECT 'person', NULL, person, NULL, approved, revised, skipped, NULL, NULL, NULL, pct
    FROM per_person
    UNION ALL
    -- Always one total row, also when nothing happened.
    SELECT 'total', NULL, NULL, COALESCE(sum(requests), 0)::bigint,
           COALESCE(sum(approved), 0)::bigint, COALESCE(sum(revised), 0)::bigint,
           COALESCE(sum(skipped), 0)::bigint, COALESCE(sum(expired), 0)::bigint,
           COALESCE(sum(reminded), 0)::bigint, COALESCE(sum(escalated), 0)::bigint,
           (SELECT pct FROM total)
    FROM per_capability
)
SELECT scope, capability, person, requests, approved, revised, skipped, expired,
       reminded, escalated,
       round(pct[1]::numeric, 3)::float8 AS p50_seconds,
       round(pct[2]::numeric, 3)::float8 AS p90_seconds,
       round(pct[3]::numeric, 3)::float8 AS max_seconds
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
