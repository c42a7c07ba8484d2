-- Health: the signals (incident, nudge, counts), /metrics and the health check (reads only).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: signal_incident
-- Claimable but unclaimed for longer than the age, counted from when each became
-- claimable (created, or run_after for retries, releases and decisions). New work
-- held back by a full max_parked or daily_new is waiting on a person or the calendar,
-- not on a broken system, so it does not count.
WITH held AS (
    SELECT c.capability
    FROM capabilities c
    WHERE (c.max_parked IS NOT NULL AND c.max_parked <= (
              SELECT count(*) FROM tasks p
              WHERE p.capability = c.capability AND p.first_claimed_at IS NOT NULL
                AND p.status IN ('pending', 'running', 'needs_approval', 'approved')))
       OR (c.daily_new IS NOT NULL AND c.daily_new <= (
              SELECT count(*) FROM tasks d
              WHERE d.capability = c.capability
                AND d.first_claimed_at >= (date_trunc('day', now() AT TIME ZONE c.day_timezone)
                                           AT TIME ZONE c.day_timezone)))
)
SELECT count(*) AS count,
       COALESCE(EXTRACT(EPOCH FROM max(now() - greatest(t.created_at, t.run_after))) / 3600,
                0)::float8 AS oldest_age_hours
FROM tasks t
WHERE t.status IN ('pending', 'approved')
  AND greatest(t.created_at, t.run_after) < now() - make_interval(secs => %(age_seconds)s)
  AND NOT (t.first_claimed_at IS NULL AND t.capability IN (SELECT capability FROM held));

-- name: signal_nudge
SELECT count(*) AS count,
       COALESCE(EXTRACT(EPOCH FROM max(now() - a.created_at)) / 3600, 0)::float8
           AS oldest_age_hours
FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = a.task_id AND n.id > a.id)
  AND a.created_at < now() - make_interval(secs => %(age_seconds)s);

-- name: signal_counts
SELECT
    (SELECT count(*) FROM approvals
     WHERE decision = 'expired' AND decided_at > now() - interval '1 day') AS expired_approvals,
    (SELECT count(*) FROM tasks
     WHERE status = 'failed' AND finished_at > now() - interval '1 day') AS failed_last_day,
    (SELECT count(*) FROM approvals a JOIN tasks t ON t.id = a.task_id
     WHERE a.decision IS NULL AND t.status = 'needs_approval'
       AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = a.task_id AND n.id > a.id)) AS open_approvals;

-- Run by TaskQueue.metrics_read (taskqueue/store/services.py) in one snapshot at scrape
-- time, and database_ping by the health check.
-- name: database_ping
SELECT 1 AS ok;

-- name: metrics_tasks
SELECT capability, status, count(*)::bigint AS n
FROM tasks GROUP BY capability, status ORDER BY capability, status;

-- name: metrics_claimable
-- Claimable now: pending or approved and past run_after; waiting since it became so.
SELECT capability, count(*)::bigint AS n,
       EXTRACT(EPOCH FROM now() - min(GREATEST(updated_at, run_after)))::float8
           AS oldest_seconds
FROM tasks
WHERE status IN ('pending', 'approved') AND run_after <= now()
GROUP BY capability ORDER BY capability;

-- name: metrics_approvals
-- Open: undecided, and its task still waits on it.
SELECT count(*)::bigint AS open,
       COALESCE(EXTRACT(EPOCH FROM now() - min(a.created_at)), 0)::float8 AS oldest_seconds
FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision IS NULL AND t.status = 'needs_approval';

-- name: metrics_decisions
SELECT decision, count(*)::bigint AS n
FROM approvals WHERE decision IS NOT NULL GROUP BY decision ORDER BY decision;

-- name: metrics_reaper
SELECT count(*)::bigint AS runs,
       COALESCE(sum(requeued), 0)::bigint AS requeued,
       COALESCE(sum(orphans_requeued), 0)::bigint AS orphans_requeued,
       COALESCE(sum(failed), 0)::bigint AS failed,
       COALESCE(sum(expired), 0)::bigint AS expired,
       EXTRACT(EPOCH FROM now() - max(at))::float8 AS last_seconds
FROM reaper_runs;
