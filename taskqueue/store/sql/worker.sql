-- Worker-side updates of a claimed task, each under the fence: heartbeat, state, release,
-- park (with its approval and files), complete and fail, alone or batched.
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name. "The fence" is the WHERE clause every
-- worker-side update carries: the task is still running, held by this worker, under this
-- claim (when a token is given).

-- name: task_heartbeat
-- The fence, then a new lease from now (the capability's length unless given).
UPDATE tasks SET lease_expires_at = now() + make_interval(secs => COALESCE(
        %(lease)s,
        (SELECT lease_seconds FROM capabilities c WHERE c.capability = tasks.capability),
        300))
WHERE id = %(id)s AND status = 'running' AND worker = %(worker)s
  AND (%(claim)s::uuid IS NULL OR claim_token = %(claim)s::uuid)
RETURNING *;

-- name: task_save_state
WITH t AS (
    UPDATE tasks SET state = %(state)s
    WHERE id = %(id)s AND status = 'running' AND worker = %(worker)s
      AND (%(claim)s::uuid IS NULL OR claim_token = %(claim)s::uuid)
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'state_saved', %(worker)s, '{}'::jsonb FROM t
)
SELECT * FROM t;

-- name: task_release
WITH t AS (
    UPDATE tasks SET status = 'pending', worker = NULL, claim_token = NULL,
        lease_expires_at = NULL,
        state = COALESCE(%(state)s, state),
        run_after = now() + make_interval(secs => %(delay)s)
    WHERE id = %(id)s AND status = 'running' AND worker = %(worker)s
      AND (%(claim)s::uuid IS NULL OR claim_token = %(claim)s::uuid)
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'released', %(worker)s,
           jsonb_build_object('from', 'running', 'to', 'pending', 'delay_seconds',
                              %(delay)s::float8, 'reason', %(reason)s::text)
    FROM t
)
SELECT * FROM t;

-- name: task_park
WITH t AS (
    UPDATE tasks SET status = 'needs_approval', worker = NULL, claim_token = NULL,
        lease_expires_at = NULL,
        state = COALESCE(%(state)s, state)
    WHERE id = %(id)s AND status = 'running' AND worker = %(worker)s
      AND (%(claim)s::uuid IS NULL OR claim_token = %(claim)s::uuid)
    RETURNING *
)
SELECT * FROM t;

-- name: approval_insert
WITH a AS (
    INSERT INTO approvals (task_id, question, request, expires_at, required, groups)
    SELECT %(task_id)s, %(question)s, %(request)s,
           now() + make_interval(secs => COALESCE(
               %(expires_in)s,
               (SELECT approval_ttl_seconds FROM capabilities WHERE capability = %(capability)s),
               172800)),
           -- The capability's required_approvals is a floor: a park may raise it, never
           -- lower it (issue 39).
           GREATEST(COALESCE(%(required)s::integer, 1),
                    COALESCE((SELECT required_approvals FROM capabilities
                              WHERE capability = %(capability)s), 1)),
           (SELECT approval_groups FROM capabilities WHERE capability = %(capability)s)
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT task_id, 'parked', %(worker)s,
           jsonb_build_object('from', 'running', 'to', 'needs_approval', 'approval_id', id,
                              'question', question, 'expires_at', expires_at)
    FROM a
)
SELECT * FROM a;

-- name: attachment_insert
INSERT INTO approval_attachments (approval_id, filename, content_type, size_bytes, sha256, data)
VALUES (%(approval_id)s, %(filename)s, %(content_type)s, %(size_bytes)s, %(sha256)s, %(data)s)
RETURNING id, approval_id, filename, content_type, size_bytes, sha256;

-- name: task_complete
WITH t AS (
    UPDATE tasks SET status = 'succeeded', worker = NULL, claim_token = NULL,
        lease_expires_at = NULL, result = %(result)s, finished_at = now()
    WHERE id = %(id)s AND status = 'running' AND worker = %(worker)s
      AND (%(claim)s::uuid IS NULL OR claim_token = %(claim)s::uuid)
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'completed', %(worker)s, jsonb_build_object('from', 'running', 'to', 'succeeded')
    FROM t
)
SELECT * FROM t;

-- name: task_fail
-- attempts counts failures. A retryable failure below max_attempts goes back to
-- pending after retry_base * 2^(attempts-1) seconds (at most an hour); otherwise the
-- task is failed, a dead letter with its last error.
WITH t AS (
    UPDATE tasks SET
        attempts = attempts + 1,
        last_error = %(error)s,
        status = CASE WHEN %(retry)s AND attempts + 1 < max_attempts
                      THEN 'pending' ELSE 'failed' END,
        run_after = CASE WHEN %(retry)s AND attempts + 1 < max_attempts
            THEN now() + make_interval(secs => least(3600, COALESCE(
                (SELECT retry_base_seconds FROM capabilities c
                 WHERE c.capability = tasks.capability), 30) * power(2, attempts)))
            ELSE run_after END,
        finished_at = CASE WHEN %(retry)s AND attempts + 1 < max_attempts
                           THEN NULL ELSE now() END,
        state = COALESCE(%(state)s, state),
        worker = NULL, claim_token = NULL, lease_expires_at = NULL
    WHERE id = %(id)s AND status = 'running' AND worker = %(worker)s
      AND (%(claim)s::uuid IS NULL OR claim_token = %(claim)s::uuid)
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'failed', %(worker)s,
           jsonb_build_object('from', 'running', 'to', status, 'error', %(error)s::text,
                              'attempts', attempts, 'retry_at',
                              CASE WHEN status = 'pending' THEN run_after END,
                              'traceback', %(traceback)s::text)
    FROM t
)
SELECT * FROM t;

-- name: task_complete_many
-- task_complete for many tasks in one statement, each under its own fence (worker and
-- claim). Rows are locked in id order so two batches never deadlock on each other. A task
-- missing from the result was not changed: its claim is lost (or it is gone).
WITH input AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(workers)s::text[], %(claims)s::uuid[],
                         %(results)s::jsonb[]) AS i(id, worker, claim, result)
), locked AS (
    SELECT t.id FROM tasks t JOIN input i ON i.id = t.id
    WHERE t.status = 'running' AND t.worker = i.worker
      AND (i.claim IS NULL OR t.claim_token = i.claim)
    ORDER BY t.id
    FOR UPDATE OF t
), t AS (
    UPDATE tasks SET status = 'succeeded', worker = NULL, claim_token = NULL,
        lease_expires_at = NULL, result = i.result, finished_at = now()
    FROM input i
    WHERE tasks.id = i.id AND tasks.id IN (SELECT id FROM locked)
      AND tasks.status = 'running' AND tasks.worker = i.worker
      AND (i.claim IS NULL OR tasks.claim_token = i.claim)
    RETURNING tasks.*, i.worker AS by_worker
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'completed', by_worker, jsonb_build_object('from', 'running', 'to', 'succeeded')
    FROM t
)
SELECT * FROM t;

-- name: task_release_many
-- task_release for many tasks in one statement, each under its own fence.
WITH input AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(workers)s::text[], %(claims)s::uuid[],
                         %(states)s::jsonb[], %(delays)s::float8[], %(reasons)s::text[])
        AS i(id, worker, claim, state, delay, reason)
), locked AS (
    SELECT t.id FROM tasks t JOIN input i ON i.id = t.id
    WHERE t.status = 'running' AND t.worker = i.worker
      AND (i.claim IS NULL OR t.claim_token = i.claim)
    ORDER BY t.id
    FOR UPDATE OF t
), t AS (
    UPDATE tasks SET status = 'pending', worker = NULL, claim_token = NULL,
        lease_expires_at = NULL,
        state = COALESCE(i.state, tasks.state),
        run_after = now() + make_interval(secs => i.delay)
    FROM input i
    WHERE tasks.id = i.id AND tasks.id IN (SELECT id FROM locked)
      AND tasks.status = 'running' AND tasks.worker = i.worker
      AND (i.claim IS NULL OR tasks.claim_token = i.claim)
    RETURNING tasks.*, i.worker AS by_worker, i.delay, i.reason
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'released', by_worker,
           jsonb_build_object('from', 'running', 'to', 'pending', 'delay_seconds', delay,
                              'reason', reason)
    FROM t
)
SELECT * FROM t;

-- name: task_fail_many
-- task_fail for many tasks in one statement, each under its own fence.
WITH input AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(workers)s::text[], %(claims)s::uuid[],
                         %(errors)s::text[], %(retries)s::bool[], %(tracebacks)s::text[],
                         %(states)s::jsonb[])
        AS i(id, worker, claim, error, retry, traceback, state)
), locked AS (
    SELECT t.id FROM tasks t JOIN input i ON i.id = t.id
    WHERE t.status = 'running' AND t.worker = i.worker
      AND (i.claim IS NULL OR t.claim_token = i.claim)
    ORDER BY t.id
    FOR UPDATE OF t
), t AS (
    UPDATE tasks SET
        attempts = tasks.attempts + 1,
        last_error = i.error,
        status = CASE WHEN i.retry AND tasks.attempts + 1 < tasks.max_attempts
                      THEN 'pending' ELSE 'failed' END,
        run_after = CASE WHEN i.retry AND tasks.attempts + 1 < tasks.max_attempts
            THEN now() + make_interval(secs => least(3600, COALESCE(
                (SELECT retry_base_seconds FROM capabilities c
                 WHERE c.capability = tasks.capability), 30) * power(2, tasks.attempts)))
            ELSE tasks.run_after END,
        finished_at = CASE WHEN i.retry AND tasks.attempts + 1 < tasks.max_attempts
                           THEN NULL ELSE now() END,
        state = COALESCE(i.state, tasks.state),
        worker = NULL, claim_token = NULL, lease_expires_at = NULL
    FROM input i
    WHERE tasks.id = i.id AND tasks.id IN (SELECT id FROM locked)
      AND tasks.status = 'running' AND tasks.worker = i.worker
      AND (i.claim IS NULL OR tasks.claim_token = i.claim)
    RETURNING tasks.*, i.worker AS by_worker, i.error AS by_error, i.traceback
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'failed', by_worker,
           jsonb_build_object('from', 'running', 'to', status, 'error', by_error,
                              'attempts', attempts, 'retry_at',
                              CASE WHEN status = 'pending' THEN run_after END,
                              'traceback', traceback)
    FROM t
)
SELECT * FROM t;
