-- Requests asked from outside a worker (TaskQueue.request_*): a task parked at birth.
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: request_key_lock
-- Serializes asks with one key of one capability, so the same key makes one request.
SELECT pg_advisory_xact_lock(hashtextextended('signoff.ask:' || %(capability)s || ':'
                                              || %(key)s, 0));

-- name: request_find
SELECT * FROM task_requests WHERE capability = %(capability)s AND key = %(key)s;

-- name: request_capability_lock
-- Serializes the asks of one capability, so its max_parked holds between the count and
-- the insert.
SELECT pg_advisory_xact_lock(hashtextextended('signoff.ask-cap:' || %(capability)s, 0));

-- name: request_room
-- The capability's max_parked (NULL: no cap) and how many of its tasks wait now.
SELECT c.max_parked,
       (SELECT count(*) FROM tasks t
        WHERE t.capability = c.capability AND t.status = 'needs_approval') AS parked
FROM capabilities c WHERE c.capability = %(capability)s;

-- name: request_capability_ensure
-- A capability asked of for the first time gets a row with the defaults.
INSERT INTO capabilities (capability) VALUES (%(capability)s) ON CONFLICT DO NOTHING;

-- name: request_task_insert
-- The task, born parked: no worker ever holds it.
INSERT INTO tasks (capability, status, payload)
VALUES (%(capability)s, 'needs_approval', %(payload)s)
RETURNING *;

-- name: request_approval_insert
-- Its question, and the task's first event. The capability's required_approvals is a
-- floor: an ask may raise it, never lower it.
WITH a AS (
    INSERT INTO approvals (task_id, question, request, expires_at, required)
    SELECT %(task_id)s, %(question)s, %(request)s,
           now() + make_interval(secs => COALESCE(%(expires_in)s, c.approval_ttl_seconds)),
           GREATEST(COALESCE(%(required)s::integer, 1), c.required_approvals)
    FROM capabilities c WHERE c.capability = %(capability)s
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT task_id, 'asked', %(asked_by)s,
           jsonb_build_object('to', 'needs_approval', 'approval_id', id, 'key', %(key)s::text,
                              'question', question, 'expires_at', expires_at)
    FROM a
)
SELECT * FROM a;

-- name: request_insert
INSERT INTO task_requests (task_id, capability, key, asked_by)
VALUES (%(task_id)s, %(capability)s, %(key)s, %(asked_by)s)
RETURNING *;

-- name: request_get
SELECT * FROM task_requests WHERE task_id = %(id)s;

-- name: request_done
-- The asker's gated action is done: its result, recorded once on an approved request.
WITH r AS (
    UPDATE task_requests SET result = %(result)s, done_by = %(by)s, done_at = now()
    WHERE task_id = %(id)s AND done_at IS NULL
    RETURNING *
), t AS (
    UPDATE tasks SET result = %(result)s
    WHERE id = (SELECT task_id FROM r)
    RETURNING id
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT task_id, 'request_done', %(by)s, jsonb_build_object('result', result) FROM r
)
SELECT * FROM r;
