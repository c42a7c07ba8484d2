-- Producer runs and the pipeline statistics read from them (`signoff stats`).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: producer_run_begin
-- Take a period: new, or left unfinished by a runner whose lease lapsed. A finished
-- period, or one a live runner holds, returns no row.
INSERT INTO producer_runs AS r (capability, producer, period, runner, lease_until)
VALUES (%(capability)s, %(producer)s, %(period)s, %(runner)s,
        now() + make_interval(secs => %(lease)s))
ON CONFLICT (capability, producer, period) DO UPDATE SET
    runner = EXCLUDED.runner, started_at = now(), lease_until = EXCLUDED.lease_until
WHERE r.finished_at IS NULL AND r.lease_until < now()
RETURNING *;

-- name: producer_run_finish
UPDATE producer_runs SET finished_at = now(), created = %(created)s, existing = %(existing)s,
    report = %(report)s
WHERE id = %(id)s AND runner = %(runner)s AND finished_at IS NULL
RETURNING *;

-- name: producer_run_abandon
-- A run that raised gives its period back at once, so the next firing runs it again.
DELETE FROM producer_runs WHERE id = %(id)s AND runner = %(runner)s AND finished_at IS NULL;

-- name: producer_run_get
SELECT * FROM producer_runs
WHERE capability = %(capability)s AND producer = %(producer)s AND period = %(period)s;

-- One capability's pipeline, read in one snapshot by TaskQueue.stats_read.
-- name: stats_now
SELECT now() AS read_at;

-- name: stats_status_counts
SELECT status, count(*)::int AS n FROM tasks WHERE capability = %(capability)s GROUP BY status;

-- name: stats_stage_counts
-- Distinct tasks per `stage` event a workload recorded (drafted, parked, submitted, ...).
SELECT e.detail->>'stage' AS stage, count(DISTINCT e.task_id)::int AS n
FROM task_events e JOIN tasks t ON t.id = e.task_id
WHERE t.capability = %(capability)s AND e.kind = 'stage' AND e.detail ? 'stage'
GROUP BY 1;

-- name: stats_skip_reasons
-- Skipped tasks by the note of the skip decision (the person's reason).
SELECT coalesce(nullif(btrim(a.note), ''), '(no reason given)') AS reason,
       count(DISTINCT a.task_id)::int AS n
FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE t.capability = %(capability)s AND t.status = 'skipped' AND a.decision = 'skipped'
GROUP BY 1;

-- name: stats_report_reasons
-- Producer runs' reports: `filtered_by_reason` ({reason: count}) summed over every
-- finished run of the capability.
SELECT r.key AS reason, sum((r.value)::text::numeric)::int AS n
FROM producer_runs p, jsonb_each(CASE WHEN jsonb_typeof(p.report->'filtered_by_reason') = 'object'
                                      THEN p.report->'filtered_by_reason' ELSE '{}'::jsonb END) r
WHERE p.capability = %(capability)s AND p.finished_at IS NOT NULL
  AND jsonb_typeof(r.value) = 'number'
GROUP BY 1;

-- name: stats_report_runs
SELECT count(*)::int AS runs, max(finished_at) AS last_at
FROM producer_runs
WHERE capability = %(capability)s AND finished_at IS NOT NULL;

-- name: stats_report_postings
-- The per-item lists (`postings`) of the capability's latest finished runs' reports.
SELECT p.producer, p.period, p.finished_at, item
FROM (SELECT * FROM producer_runs
      WHERE capability = %(capability)s AND finished_at IS NOT NULL
        AND jsonb_typeof(report->'postings') = 'array'
      ORDER BY finished_at DESC LIMIT %(runs)s) p,
     jsonb_array_elements(p.report->'postings') item
ORDER BY p.finished_at DESC, p.id;
