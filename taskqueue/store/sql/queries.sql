-- Signoff's runtime SQL: every query the queue runs, as named blocks loaded once by
-- taskqueue/queries.py. The TaskQueue method that runs a query has the query's name.
-- "The fence" below is the WHERE clause every worker-side update carries: the task is
-- still running, held by this worker, under this claim (when a token is given).

-- name: capability_get
SELECT * FROM capabilities WHERE capability = %(capability)s;

-- name: capability_list
SELECT * FROM capabilities ORDER BY capability;

-- name: capability_put
INSERT INTO capabilities AS c (capability, max_running, max_parked, daily_new, day_timezone,
        lease_seconds, approval_ttl_seconds, max_attempts, retry_base_seconds)
VALUES (%(capability)s, %(max_running)s, %(max_parked)s, %(daily_new)s, %(day_timezone)s,
        %(lease_seconds)s, %(approval_ttl_seconds)s, %(max_attempts)s, %(retry_base_seconds)s)
ON CONFLICT (capability) DO UPDATE SET
    max_running = EXCLUDED.max_running,
    max_parked = EXCLUDED.max_parked,
    daily_new = EXCLUDED.daily_new,
    day_timezone = EXCLUDED.day_timezone,
    lease_seconds = EXCLUDED.lease_seconds,
    approval_ttl_seconds = EXCLUDED.approval_ttl_seconds,
    max_attempts = EXCLUDED.max_attempts,
    retry_base_seconds = EXCLUDED.retry_base_seconds,
    updated_at = now()
RETURNING *;

-- name: capability_lock
-- Serializes writers of one capability's settings row.
SELECT pg_advisory_xact_lock(hashtextextended('signoff.caps:' || %(capability)s, 0));

-- name: timezone_exists
SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = %(tz)s) AS ok;

-- name: dedupe_lock
-- A batch takes its dedupe keys (sorted by the caller) before inserting, so two batches
-- that share keys in different orders wait for each other instead of deadlocking.
SELECT pg_advisory_xact_lock(hashtextextended('signoff.dedupe:' || %(capability)s || ':' || k, 0))
FROM unnest(%(keys)s::text[]) WITH ORDINALITY AS u(k, n)
ORDER BY n;

-- name: task_enqueue
-- A dedupe hit inserts nothing and returns the holder's id. Under a concurrent insert
-- of the same key, ON CONFLICT waits for it; if the holder then is not yet visible to
-- this statement's snapshot, no row comes back and the caller runs this again.
WITH ins AS (
    INSERT INTO tasks (capability, priority, payload, max_attempts, run_after, dedupe_key)
    VALUES (
        %(capability)s, %(priority)s, %(payload)s,
        COALESCE(%(max_attempts)s,
                 (SELECT max_attempts FROM capabilities WHERE capability = %(capability)s), 3),
        now() + make_interval(secs => %(delay)s),
        %(dedupe_key)s)
    ON CONFLICT (capability, dedupe_key)
        WHERE dedupe_key IS NOT NULL
          AND status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded')
        DO NOTHING
    RETURNING id
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'enqueued', %(actor)s,
           jsonb_build_object('to', 'pending', 'dedupe_key', %(dedupe_key)s::text)
    FROM ins
)
SELECT id, true AS inserted FROM ins
UNION ALL
SELECT id, false AS inserted FROM tasks
WHERE capability = %(capability)s AND dedupe_key = %(dedupe_key)s
  AND status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded')
  AND NOT EXISTS (SELECT 1 FROM ins);

-- name: task_enqueue_many
-- A whole batch in one statement. The caller took the batch's dedupe keys (dedupe_lock)
-- first, so under READ COMMITTED this snapshot sees every committed holder of those keys.
-- Within the batch the first item of a key is inserted and the later ones return its id;
-- a key held by an unfinished or succeeded task returns the holder. Ids come from the
-- sequence up front so each input row knows its task. A row with no id back met a
-- conflict this snapshot cannot see (a holder changed status meanwhile): the caller runs
-- task_enqueue for it. Its NOTIFY is sent at commit, like every NOTIFY.
WITH numbered AS MATERIALIZED (
    -- unnest yields the items in order, so the ids follow the batch's order.
    SELECT i.*, nextval('tasks_id_seq') AS id
    FROM unnest(%(priorities)s::int[], %(payloads)b::text[]::jsonb[], %(max_attempts)s::int[],
                %(delays)s::float8[], %(dedupe_keys)s::text[])
         WITH ORDINALITY AS i(priority, payload, max_attempts, delay, dedupe_key, n)
), input AS MATERIALIZED (
    SELECT *, row_number() OVER (PARTITION BY dedupe_key ORDER BY n) AS key_rank
    FROM numbered
), held AS (
    SELECT t.id, t.dedupe_key FROM tasks t
    WHERE t.capability = %(capability)s
      AND t.dedupe_key = ANY(%(dedupe_keys)s::text[])
      AND t.status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded')
), ins AS (
    INSERT INTO tasks (id, capability, priority, payload, max_attempts, run_after, dedupe_key)
    SELECT i.id, %(capability)s, i.priority, i.payload,
           COALESCE(i.max_attempts,
                    (SELECT max_attempts FROM capabilities WHERE capability = %(capability)s),
                    3),
           now() + make_interval(secs => i.delay), i.dedupe_key
    FROM input i
    WHERE i.dedupe_key IS NULL
       OR (i.key_rank = 1 AND NOT EXISTS (SELECT 1 FROM held h
                                          WHERE h.dedupe_key = i.dedupe_key))
    ORDER BY i.n
    ON CONFLICT (capability, dedupe_key)
        WHERE dedupe_key IS NOT NULL
          AND status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded')
        DO NOTHING
    RETURNING id, dedupe_key
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'enqueued', %(actor)s,
           jsonb_build_object('to', 'pending', 'dedupe_key', dedupe_key)
    FROM ins
)
SELECT i.n, COALESCE(mine.id, h.id, first.id) AS id, mine.id IS NOT NULL AS inserted,
       -- Evaluated once: wakes idle workers when the batch created something.
       (SELECT pg_notify(%(channel)s, %(capability)s) WHERE EXISTS (SELECT 1 FROM ins))
           AS notified
FROM input i
LEFT JOIN ins mine ON mine.id = i.id
LEFT JOIN held h ON h.dedupe_key = i.dedupe_key
LEFT JOIN ins first ON first.dedupe_key = i.dedupe_key AND i.key_rank > 1
ORDER BY i.n;

-- name: task_enqueue_plain
-- A batch without dedupe keys: every item is a new task, so there is nothing to look up
-- and the statement runs alone in autocommit. Ids come from the sequence up front, in the
-- batch's order (unnest yields the items in order); the payloads arrive as checked JSON text.
WITH input AS MATERIALIZED (
    SELECT i.*, nextval('tasks_id_seq') AS id
    FROM unnest(%(priorities)s::int[], %(payloads)b::text[]::jsonb[], %(max_attempts)s::int[],
                %(delays)s::float8[])
         WITH ORDINALITY AS i(priority, payload, max_attempts, delay, n)
), ins AS (
    INSERT INTO tasks (id, capability, priority, payload, max_attempts, run_after)
    SELECT i.id, %(capability)s, i.priority, i.payload,
           COALESCE(i.max_attempts,
                    (SELECT max_attempts FROM capabilities WHERE capability = %(capability)s),
                    3),
           now() + make_interval(secs => i.delay)
    FROM input i
    ORDER BY i.n
    RETURNING id
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'enqueued', %(actor)s, '{"to": "pending", "dedupe_key": null}'::jsonb
    FROM ins
)
SELECT i.id, (SELECT pg_notify(%(channel)s, %(capability)s)) AS notified
FROM input i
ORDER BY i.n;

-- name: task_claim
-- Up to n claimable tasks in one statement (see signoff_claim in migration 0005): each task's
-- columns, the status it was claimed from, and its latest approval as ap_* with that
-- approval's attachment metadata, in claim order. No row: nothing to claim.
SELECT (c.claimed_task).*, c.claimed_from AS old_status,
       (c.latest_approval).id AS ap_id, (c.latest_approval).question AS ap_question,
       (c.latest_approval).request AS ap_request,
       (c.latest_approval).created_at AS ap_created_at,
       (c.latest_approval).expires_at AS ap_expires_at,
       (c.latest_approval).decision AS ap_decision,
       (c.latest_approval).decided_by AS ap_decided_by,
       (c.latest_approval).decided_at AS ap_decided_at,
       (c.latest_approval).note AS ap_note,
       c.latest_files AS ap_files
FROM signoff_claim(%(capability)s, %(worker)s, %(lease)s, %(n)s) c;

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
    INSERT INTO approvals (task_id, question, request, expires_at)
    SELECT %(task_id)s, %(question)s, %(request)s,
           now() + make_interval(secs => COALESCE(
               %(expires_in)s,
               (SELECT approval_ttl_seconds FROM capabilities WHERE capability = %(capability)s),
               172800))
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

-- name: task_status_many
SELECT id, capability, status, worker, claim_token FROM tasks WHERE id = ANY(%(ids)s);

-- name: task_status
SELECT id, capability, status, worker, claim_token FROM tasks WHERE id = %(id)s;

-- name: task_get
SELECT * FROM tasks WHERE id = %(id)s;

-- name: task_lock
SELECT * FROM tasks WHERE id = %(id)s FOR UPDATE;

-- name: task_list
SELECT * FROM tasks
WHERE (%(status)s::text IS NULL OR status = %(status)s)
  AND (%(capability)s::text IS NULL OR capability = %(capability)s)
ORDER BY id
LIMIT %(limit)s;

-- name: task_set_status
-- Operator calls (cancel, retry); the caller locked the row and checked the move.
WITH t AS (
    UPDATE tasks SET
        status = %(status)s,
        worker = NULL, claim_token = NULL, lease_expires_at = NULL,
        attempts = CASE WHEN %(reset_attempts)s THEN 0 ELSE attempts END,
        run_after = CASE WHEN %(status)s = 'pending' THEN now() ELSE run_after END,
        finished_at = CASE WHEN %(status)s IN ('pending', 'approved') THEN NULL ELSE now() END
    WHERE id = %(id)s
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, %(kind)s, %(actor)s,
           jsonb_build_object('from', %(old_status)s::text, 'to', status) || %(detail)s
    FROM t
)
SELECT * FROM t;

-- name: task_list_finished
-- Tasks that finished in [since, until): per (capability, status) the latest `per_group`,
-- each row with its group's total (a daily report shows counts and a few names).
SELECT * FROM (
    SELECT t.*,
           count(*) OVER (PARTITION BY capability, status)::int AS group_total,
           row_number() OVER (PARTITION BY capability, status
                              ORDER BY finished_at DESC, id DESC) AS group_rank
    FROM tasks t
    WHERE finished_at >= %(since)s AND finished_at < %(until)s
      AND status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled')
) f
WHERE group_rank <= %(per_group)s
ORDER BY capability, status, finished_at DESC, id DESC;

-- name: approval_latest_many
SELECT DISTINCT ON (task_id) * FROM approvals
WHERE task_id = ANY(%(task_ids)s)
ORDER BY task_id, id DESC;

-- name: approval_list_for_task
SELECT * FROM approvals WHERE task_id = %(task_id)s ORDER BY id;

-- name: approval_get
SELECT * FROM approvals WHERE id = %(id)s;

-- name: approval_lock_latest_for_task
SELECT *, expires_at <= now() AS past_expiry FROM approvals
WHERE task_id = %(task_id)s ORDER BY id DESC LIMIT 1 FOR UPDATE;

-- name: approval_lock
-- A task parks again after a cancel and a retry; only its latest approval is its
-- current question, an older one left open is superseded.
SELECT *, expires_at <= now() AS past_expiry,
       NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = approvals.task_id AND n.id > approvals.id) AS is_current
FROM approvals WHERE id = %(id)s FOR UPDATE;

-- name: approval_list_open
SELECT a.* FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = a.task_id AND n.id > a.id)
ORDER BY a.created_at, a.id;

-- name: approval_decide
UPDATE approvals SET decision = %(decision)s, decided_by = %(by)s, decided_at = now(),
    note = %(note)s
WHERE id = %(id)s AND decision IS NULL
RETURNING *;

-- name: task_after_decision
-- Approve and revise make the task claimable again ahead of new work; skip ends it.
WITH t AS (
    UPDATE tasks SET
        status = CASE WHEN %(decision)s = 'skipped' THEN 'skipped' ELSE 'approved' END,
        run_after = now(),
        finished_at = CASE WHEN %(decision)s = 'skipped' THEN now() END
    WHERE id = %(id)s AND status = 'needs_approval'
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'decided', %(by)s,
           jsonb_build_object('from', 'needs_approval', 'to', status,
                              'decision', %(decision)s::text, 'approval_id', %(approval_id)s::bigint,
                              'note', %(note)s::text)
    FROM t
)
SELECT * FROM t;

-- name: attachment_list_many
SELECT id, approval_id, filename, content_type, size_bytes, sha256
FROM approval_attachments WHERE approval_id = ANY(%(approval_ids)s) ORDER BY id;

-- name: attachment_get
SELECT * FROM approval_attachments WHERE id = %(id)s;

-- name: event_list_for_task
SELECT * FROM task_events WHERE task_id = %(task_id)s ORDER BY id;

-- name: event_insert
INSERT INTO task_events (task_id, kind, actor, detail)
VALUES (%(task_id)s, %(kind)s, %(actor)s, %(detail)s)
RETURNING *;

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

-- name: queue_summary
-- Per capability: counts by status, and the oldest claimable task with its age.
SELECT capability, status, count(*) AS n,
       min(CASE WHEN status IN ('pending', 'approved')
                THEN greatest(created_at, run_after) END) AS oldest_waiting_since
FROM tasks
WHERE status IN ('pending', 'running', 'needs_approval', 'approved')
   OR finished_at > now() - interval '1 day'
GROUP BY capability, status
ORDER BY capability, status;

-- name: notify
SELECT pg_notify(%(channel)s, %(payload)s);

-- Notifications ------------------------------------------------------------------------
-- Run by taskqueue/store/notifications.py. "The sender's fence" is `claimed_by =
-- %(sender)s`: a sender records only what it still holds, so two processes of one
-- channel never both deliver or mark the same row.

-- name: notification_channel_register
-- A channel new to this database is owed every question still open (and nothing older).
WITH ch AS (
    INSERT INTO notification_channels (name) VALUES (%(channel)s)
    ON CONFLICT (name) DO NOTHING
    RETURNING name
)
INSERT INTO notification_deliveries (notification_id, channel)
SELECT n.id, ch.name
FROM ch, notifications n
JOIN approvals a ON a.id = n.approval_id
JOIN tasks t ON t.id = a.task_id
WHERE n.kind = 'approval_request' AND a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals l WHERE l.task_id = a.task_id AND l.id > a.id)
RETURNING notification_id;

-- name: notification_claim
-- Undelivered rows of one channel, oldest first, past their backoff and not held by a
-- live sender (a lapsed claim means that sender died: the row is owed again). A request
-- whose question was settled before it went out is delivered as nothing: the channel
-- gets its closing instead. SKIP LOCKED lets senders claim side by side.
WITH candidate AS (
    SELECT d.notification_id
    FROM notification_deliveries d
    WHERE d.channel = %(channel)s AND d.delivered_at IS NULL
      AND d.next_attempt_at <= now()
      AND (d.claim_until IS NULL OR d.claim_until < now())
      AND (%(approval_id)s::bigint IS NULL OR d.notification_id IN (
              SELECT id FROM notifications WHERE approval_id = %(approval_id)s::bigint))
    ORDER BY d.notification_id
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE notification_deliveries d SET
        claimed_by = %(sender)s,
        claim_until = now() + make_interval(secs => %(lease)s)
    FROM candidate c
    WHERE d.channel = %(channel)s AND d.notification_id = c.notification_id
    RETURNING d.*
)
SELECT n.id, n.kind, n.task_id, n.approval_id, n.body, n.created_at, c.channel,
       c.attempts, c.last_error, c.claimed_by, c.claim_until, c.receipt IS NOT NULL AS redelivery,
       (n.kind = 'approval_request' AND (
            a.decision IS NOT NULL OR t.status <> 'needs_approval'
            OR EXISTS (SELECT 1 FROM approvals l WHERE l.task_id = a.task_id AND l.id > a.id)
       )) AS settled
FROM claimed c
JOIN notifications n ON n.id = c.notification_id
LEFT JOIN approvals a ON a.id = n.approval_id
LEFT JOIN tasks t ON t.id = a.task_id
ORDER BY n.id;

-- name: notification_renew
-- A live sender's heartbeat: everything it holds stays its own for another lease.
UPDATE notification_deliveries SET claim_until = now() + make_interval(secs => %(lease)s)
WHERE channel = %(channel)s AND claimed_by = %(sender)s AND delivered_at IS NULL
RETURNING notification_id;

-- name: notification_mark_delivered
WITH d AS (
    UPDATE notification_deliveries SET
        delivered_at = now(), receipt = %(receipt)s, claimed_by = NULL, claim_until = NULL,
        attempts = attempts + 1, last_error = NULL
    WHERE notification_id = %(id)s AND channel = %(channel)s AND claimed_by = %(sender)s
      AND delivered_at IS NULL
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT n.task_id, 'notified', %(sender)s,
           jsonb_build_object('notification_id', n.id, 'kind', n.kind, 'channel', d.channel,
                              'approval_id', n.approval_id)
    FROM d JOIN notifications n ON n.id = d.notification_id
    WHERE n.task_id IS NOT NULL AND %(receipt)s::jsonb IS DISTINCT FROM '{"skipped": true}'::jsonb
)
SELECT * FROM d;

-- name: notification_release
-- A failed delivery: give the row back with the error, to be tried after `delay`.
-- Rows claimed in the same batch but not tried give theirs back without an attempt.
UPDATE notification_deliveries SET
    claimed_by = NULL, claim_until = NULL,
    attempts = attempts + CASE WHEN %(attempted)s THEN 1 ELSE 0 END,
    last_error = %(error)s, next_attempt_at = now() + make_interval(secs => %(delay)s)
WHERE notification_id = %(id)s AND channel = %(channel)s AND claimed_by = %(sender)s
RETURNING *;

-- name: notification_redeliver
-- Owe one channel the request of a still-open question again (a chat's "show me what
-- waits" command); whatever the channel showed before is its own to tidy up. The old
-- receipt stays, so the channel can tell a re-delivery from a first one.
UPDATE notification_deliveries d SET
    delivered_at = NULL, claimed_by = NULL, claim_until = NULL, next_attempt_at = now(),
    last_error = NULL
FROM notifications n, approvals a, tasks t
WHERE d.channel = %(channel)s AND d.notification_id = n.id
  AND n.kind = 'approval_request' AND n.approval_id = %(approval_id)s
  AND a.id = n.approval_id AND a.decision IS NULL
  AND t.id = a.task_id AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals l WHERE l.task_id = a.task_id AND l.id > a.id)
  AND d.delivered_at IS NOT NULL
RETURNING d.notification_id;

-- name: notification_wake
-- Make every undelivered row of a channel due now (the channel is back: skip the backoff).
UPDATE notification_deliveries SET next_attempt_at = now()
WHERE channel = %(channel)s AND delivered_at IS NULL AND next_attempt_at > now();

-- name: notification_next_due
-- Seconds until the channel's next undelivered row is due (0: now; NULL: none owed).
SELECT CASE WHEN count(*) > 0 THEN GREATEST(0, EXTRACT(EPOCH FROM
           min(GREATEST(next_attempt_at, COALESCE(claim_until, next_attempt_at))) - now()))
       END::float8 AS seconds
FROM notification_deliveries
WHERE channel = %(channel)s AND delivered_at IS NULL;

-- name: notification_insert
INSERT INTO notifications (kind, task_id, body)
VALUES (%(kind)s, %(task_id)s, %(body)s)
RETURNING id;

-- name: notification_list
SELECT n.*, d.channel, d.delivered_at, d.attempts, d.last_error, d.receipt
FROM notifications n
LEFT JOIN notification_deliveries d ON d.notification_id = n.id
WHERE (%(task_id)s::bigint IS NULL OR n.task_id = %(task_id)s::bigint)
  AND (%(kind)s::text IS NULL OR n.kind = %(kind)s::text)
ORDER BY n.id, d.channel;

-- name: notification_backlog
-- Per channel: undelivered rows and the age of the oldest (for /metrics and health).
SELECT d.channel, count(*)::int AS undelivered,
       COALESCE(EXTRACT(EPOCH FROM now() - min(n.created_at)), 0)::float8 AS oldest_seconds
FROM notification_deliveries d JOIN notifications n ON n.id = d.notification_id
WHERE d.delivered_at IS NULL
GROUP BY d.channel ORDER BY d.channel;

-- name: alert_state_ensure
INSERT INTO alert_states (name) VALUES (%(name)s) ON CONFLICT (name) DO NOTHING;

-- name: alert_state_change
-- Exactly one caller sees a change: the update matches only while the state differs;
-- the alert notification is written in the same transaction.
WITH s AS (
    UPDATE alert_states SET firing = %(firing)s, changed_at = now()
    WHERE name = %(name)s AND firing <> %(firing)s
    RETURNING *
)
INSERT INTO notifications (kind, body)
SELECT 'alert', %(body)s::jsonb || jsonb_build_object('name', s.name, 'firing', s.firing)
FROM s
RETURNING id;

-- Producer runs ----------------------------------------------------------------------------

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

-- Stats ------------------------------------------------------------------------------------
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

-- name: task_dedupe_known
-- Which of these dedupe keys any task of the capability holds, in any status (a producer
-- that must never enqueue the same thing twice, even after a skip or a failure).
SELECT DISTINCT dedupe_key FROM tasks
WHERE capability = %(capability)s AND dedupe_key = ANY(%(keys)s::text[]);

-- Metrics and health (reads only) ----------------------------------------------------------
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
