-- Analytics: how people answer the questions (reads only). Named blocks, loaded once with
-- every .sql file here by taskqueue/store/queries.py; the TaskQueue method that runs a
-- query has its name (taskqueue/store/analytics.py, and metrics_read for the metrics_*).

-- name: decision_stats
-- Per capability, per person and in total, over a window [since, until) (NULL: unbounded):
-- `requests` are approvals asked in the window; approved/revised/skipped/expired are
-- approvals settled in the window. The time to decide is decided_at - created_at of the
-- approved, revised and skipped ones (an expiry is nobody's decision). Percentiles are
-- percentile_cont: the linear interpolation between the two nearest times, the convention
-- of a hand-computed median (the mean of the middle two of an even count) and of
-- numpy/Prometheus-style quantiles; percentile_disc would report the lower of the two and
-- jump as single rows arrive. They are rounded to the millisecond, so the float
-- arithmetic's last digit (420.0000000000001) never shows and a hand-computed figure
-- matches exactly. A person's row counts the decisions recorded in their name
-- (decided_by) across the capabilities in scope; requests and expiries belong to no
-- person, so a person's row reports them as NULL.
WITH scope AS (
    SELECT a.created_at, a.decided_at, a.decision, a.decided_by, t.capability
    FROM approvals a JOIN tasks t ON t.id = a.task_id
    WHERE (%(capability)s::text IS NULL OR t.capability = %(capability)s::text)
),
facts AS (
    SELECT capability, NULL::text AS person, 'asked' AS kind, NULL::float8 AS seconds
    FROM scope
    WHERE created_at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND created_at < COALESCE(%(until)s::timestamptz, 'infinity')
    UNION ALL
    SELECT capability,
           CASE WHEN decision <> 'expired' THEN decided_by END,
           decision,
           CASE WHEN decision <> 'expired'
                THEN EXTRACT(EPOCH FROM decided_at - created_at)::float8 END
    FROM scope
    WHERE decided_at >= COALESCE(%(since)s::timestamptz, '-infinity')
      AND decided_at < COALESCE(%(until)s::timestamptz, 'infinity')
)
SELECT CASE GROUPING(capability, person) WHEN 1 THEN 'capability' WHEN 2 THEN 'person'
                                         ELSE 'total' END AS scope,
       capability, person,
       CASE WHEN GROUPING(person) = 0 THEN NULL
            ELSE count(*) FILTER (WHERE kind = 'asked') END AS requests,
       count(*) FILTER (WHERE kind = 'approved') AS approved,
       count(*) FILTER (WHERE kind = 'revised') AS revised,
       count(*) FILTER (WHERE kind = 'skipped') AS skipped,
       CASE WHEN GROUPING(person) = 0 THEN NULL
            ELSE count(*) FILTER (WHERE kind = 'expired') END AS expired,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds)::numeric, 3)::float8
           AS p50_seconds,
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds)::numeric, 3)::float8
           AS p90_seconds,
       round(max(seconds)::numeric, 3)::float8 AS max_seconds
FROM facts
GROUP BY GROUPING SETS ((capability), (person), ())
-- The person set's NULL group holds the requests and expiries: no one's row.
HAVING GROUPING(person) = 1 OR person IS NOT NULL
ORDER BY GROUPING(capability, person), capability, person;

-- name: metrics_decision_seconds
-- Cumulative bucket counts of the time to decide, per capability and decision, over every
-- decided approval still in the database (the pruner's audit_days bounds it).
SELECT t.capability, a.decision, b.le,
       count(*) FILTER (WHERE EXTRACT(EPOCH FROM a.decided_at - a.created_at) <= b.le)
           AS n,
       count(*) AS total,
       sum(EXTRACT(EPOCH FROM a.decided_at - a.created_at))::float8 AS seconds
FROM approvals a JOIN tasks t ON t.id = a.task_id
CROSS JOIN unnest(%(buckets)s::float8[]) AS b(le)
WHERE a.decision IN ('approved', 'revised', 'skipped')
GROUP BY t.capability, a.decision, b.le
ORDER BY t.capability, a.decision, b.le;

-- name: metrics_approvals_expired
SELECT t.capability, count(*) AS n
FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision = 'expired'
GROUP BY t.capability ORDER BY t.capability;
