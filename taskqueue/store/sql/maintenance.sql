-- Maintenance: the reaper (rescues, expiries, its runs) and retention (the pruner).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: task_rescue_many
-- The reaper's rescue: running tasks whose lease lapsed, and running tasks with a
-- NULL lease (written by hand, by older versions or by a migration) untouched for
-- orphan_after. Each rescue counts as a failure; past max_attempts the task fails.
WITH lost AS (
    SELECT id, worker, lease_expires_at IS NULL AS orphan
    FROM tasks
    WHERE status = 'running'
      AND (lease_expires_at < now()
           OR (lease_expires_at IS NULL
               AND updated_at < now() - make_interval(secs => %(orphan_after)s)))
    FOR UPDATE SKIP LOCKED
), t AS (
    UPDATE tasks SET
        attempts = tasks.attempts + 1,
        status = CASE WHEN tasks.attempts + 1 >= tasks.max_attempts THEN 'failed' ELSE 'pending' END,
        last_error = CASE WHEN lost.orphan
            THEN 'running with no lease and not updated for ' || %(orphan_after)s || ' s'
            ELSE 'lease expired while held by ' || COALESCE(lost.worker, 'an unknown worker') END,
        run_after = now(),
        finished_at = CASE WHEN tasks.attempts + 1 >= tasks.max_attempts THEN now() END,
        worker = NULL, claim_token = NULL, lease_expires_at = NULL
    FROM lost
    WHERE tasks.id = lost.id
    RETURNING tasks.id, tasks.capability, tasks.status, tasks.attempts, lost.worker, lost.orphan
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'reaped', 'reaper',
           jsonb_build_object('from', 'running', 'to', status, 'worker', worker,
                              'orphan', orphan, 'attempts', attempts)
    FROM t
)
SELECT * FROM t;

-- name: approval_expire_many
-- Unanswered approvals past their expiry end their tasks as expired.
WITH a AS (
    UPDATE approvals SET decision = 'expired', decided_at = now()
    FROM tasks
    WHERE approvals.task_id = tasks.id
      AND approvals.decision IS NULL
      AND approvals.expires_at <= now()
      AND tasks.status = 'needs_approval'
      AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = approvals.task_id AND n.id > approvals.id)
      AND (%(approval_id)s::bigint IS NULL OR approvals.id = %(approval_id)s::bigint)
    RETURNING approvals.id, approvals.task_id
), t AS (
    UPDATE tasks SET status = 'expired', finished_at = now()
    FROM a
    WHERE tasks.id = a.task_id AND tasks.status = 'needs_approval'
    RETURNING tasks.id, tasks.capability, a.id AS approval_id
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'expired', 'reaper',
           jsonb_build_object('from', 'needs_approval', 'to', 'expired',
                              'approval_id', approval_id)
    FROM t
)
SELECT * FROM t;

-- name: reaper_run_insert
INSERT INTO reaper_runs (requeued, orphans_requeued, failed, expired)
VALUES (%(requeued)s, %(orphans_requeued)s, %(failed)s, %(expired)s)
RETURNING *;

-- name: reaper_run_latest
-- age_seconds by the database's clock, so /healthz does not depend on the host's.
SELECT *, EXTRACT(EPOCH FROM now() - at)::float8 AS age_seconds
FROM reaper_runs ORDER BY id DESC LIMIT 1;

-- name: task_prune_many
-- Retention (the pruner): deletes up to `batch` finished tasks finished longer ago than
-- `age` seconds, with their events, approvals and attachments (ON DELETE CASCADE). A task
-- that has approvals is the audit trail and waits for `audit_age` instead. Walks the
-- primary key from `after_id`, skips rows another transaction holds, and never touches
-- an unfinished task, so claims (which lock pending rows) never wait for it. A NULL
-- capability means every capability except `exclude` (those have their own age).
WITH doomed AS (
    SELECT t.id FROM tasks t
    WHERE t.id > %(after_id)s
      AND t.status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled')
      AND COALESCE(t.finished_at, t.updated_at) < now() - make_interval(secs => %(age)s)
      AND (%(capability)s::text IS NULL OR t.capability = %(capability)s)
      AND NOT t.capability = ANY(%(exclude)s::text[])
      AND (COALESCE(t.finished_at, t.updated_at) < now() - make_interval(secs => %(audit_age)s)
           OR NOT EXISTS (SELECT 1 FROM approvals a WHERE a.task_id = t.id))
    ORDER BY t.id
    LIMIT %(batch)s
    FOR UPDATE OF t SKIP LOCKED
), gone AS (
    DELETE FROM tasks t USING doomed d WHERE t.id = d.id RETURNING t.id
)
SELECT count(*)::int AS deleted, max(id) AS last_id FROM gone;

-- name: attachment_prune_many
-- The bytes of the evidence of finished tasks older than `age` whose approvals are kept
-- for the audit trail: the attachment rows go, the approvals and their decisions stay.
WITH doomed AS (
    SELECT f.id FROM approval_attachments f
    JOIN approvals a ON a.id = f.approval_id
    JOIN tasks t ON t.id = a.task_id
    WHERE t.status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled')
      AND COALESCE(t.finished_at, t.updated_at) < now() - make_interval(secs => %(age)s)
      AND (%(capability)s::text IS NULL OR t.capability = %(capability)s)
      AND NOT t.capability = ANY(%(exclude)s::text[])
    ORDER BY f.id
    LIMIT %(batch)s
    FOR UPDATE OF f SKIP LOCKED
), gone AS (
    DELETE FROM approval_attachments f USING doomed d WHERE f.id = d.id RETURNING f.id
)
SELECT count(*)::int AS deleted FROM gone;

-- name: table_vacuum
-- After a prune that deleted at least the pruner's `vacuum_after` rows: marks the deleted
-- rows' space free for reuse and refreshes the planner's statistics now, not at
-- autovacuum's next visit. {table} is one of PRUNED_TABLES (store/services.py), formatted
-- in as an identifier, never a value from input. VACUUM takes SHARE UPDATE EXCLUSIVE on the
-- table, which claims, enqueues, completions and the pruner's deletes (ROW EXCLUSIVE) never
-- wait for; its last step, giving empty pages at the table's end back to the system, takes
-- the table's exclusive lock only when it is free and gives it up within 20 ms of anyone
-- waiting for it. It cannot run in a transaction block.
VACUUM (ANALYZE) {table};
