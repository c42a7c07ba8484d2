-- People and operators: deciding an approval, and the operator moves (retry, cancel).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: approval_lock_latest_for_task
SELECT *, expires_at <= now() AS past_expiry FROM approvals
WHERE task_id = %(task_id)s ORDER BY id DESC LIMIT 1 FOR UPDATE;

-- name: approval_lock
-- A task parks again after a cancel and a retry; only its latest approval is its
-- current question, an older one left open is superseded.
SELECT *, expires_at <= now() AS past_expiry,
       NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = approvals.task_id AND n.id > approvals.id) AS is_current
FROM approvals WHERE id = %(id)s FOR UPDATE;

-- name: decision_task_lock
-- The task a decision is about, by its id or its approval's, locked after the approval
-- (the order every decision takes). Sent in the same round trip as the approval's lock.
SELECT * FROM tasks
WHERE id = coalesce(%(task_id)s::bigint,
                    (SELECT task_id FROM approvals WHERE id = %(approval_id)s::bigint))
FOR UPDATE;

-- name: decision_capability
-- That task's capability row (its approvers), in the same round trip.
SELECT c.* FROM capabilities c JOIN tasks t ON t.capability = c.capability
WHERE t.id = coalesce(%(task_id)s::bigint,
                      (SELECT task_id FROM approvals WHERE id = %(approval_id)s::bigint));

-- name: decision_vote_insert
-- An approve's vote, sent beside the decision's locks before any check ran (after the
-- approval's lock, so approves of one request are still counted one at a time): written
-- only while the approval is open and unexpired, as counted until the caller has read the
-- request (approval_vote_uncount). A check that refuses the decision rolls it back. No
-- row: that person (compared case-folded: by_key, migration 0013) already approved it, or
-- the approval is decided or expired.
INSERT INTO approval_votes (approval_id, person, person_key, counts, via, credential_id,
                            authenticator_data, client_data, signature, origin)
SELECT a.id, %(by)s, %(by_key)s, true, %(via)s, %(credential_id)s, %(authenticator_data)s,
       %(client_data)s, %(signature)s, %(origin)s FROM approvals a
WHERE a.id = coalesce(%(approval_id)s::bigint,
                      (SELECT l.id FROM approvals l WHERE l.task_id = %(task_id)s::bigint
                       ORDER BY l.id DESC LIMIT 1))
  AND a.decision IS NULL AND a.expires_at > now()
ON CONFLICT (approval_id, person_key) DO NOTHING
RETURNING *;

-- name: decision_votes
-- The approves of that approval, the one just written among them (a later statement).
SELECT v.* FROM approval_votes v
WHERE v.approval_id = coalesce(%(approval_id)s::bigint,
                               (SELECT l.id FROM approvals l WHERE l.task_id = %(task_id)s::bigint
                                ORDER BY l.id DESC LIMIT 1))
ORDER BY v.decided_at, v.person;

-- name: approval_vote_uncount
-- The requester's own approve: recorded, not counted.
UPDATE approval_votes SET counts = false
WHERE approval_id = %(approval_id)s AND person_key = %(by_key)s
RETURNING person;

-- name: approval_decide
UPDATE approvals SET decision = %(decision)s, decided_by = %(by)s, decided_at = now(),
    note = %(note)s, decided_via = %(via)s
WHERE id = %(id)s AND decision IS NULL
RETURNING *;

-- name: approval_votes_many
SELECT * FROM approval_votes WHERE approval_id = ANY(%(approval_ids)s)
ORDER BY approval_id, decided_at, person;

-- name: approval_progress_insert
-- An approve short of the count: every channel is owed the progress (migration 0009).
INSERT INTO notifications (kind, task_id, approval_id, body)
VALUES ('approval_progress', %(task_id)s, %(approval_id)s,
        jsonb_build_object('approved', %(approved)s::int, 'required', %(required)s::int,
                           'by', %(by)s::text)
        -- Approver groups still short (issue 39): "waiting for finance".
        || CASE WHEN cardinality(%(waiting_for)s::text[]) > 0
                THEN jsonb_build_object('waiting_for', to_jsonb(%(waiting_for)s::text[]))
                ELSE '{}'::jsonb END)
RETURNING id;

-- name: approval_votes_discard
-- A revise sends the request back: the approves gathered for it no longer count.
DELETE FROM approval_votes WHERE approval_id = %(approval_id)s RETURNING person;

-- name: task_after_decision
-- Approve and revise make the task claimable again ahead of new work; skip ends it. A
-- request asked from outside a worker (task_requests) has no worker to resume: any
-- decision ends it, succeeded on an approve, skipped otherwise.
WITH asked AS (
    SELECT EXISTS (SELECT 1 FROM task_requests WHERE task_id = %(id)s) AS yes
), t AS (
    UPDATE tasks SET
        status = CASE WHEN %(decision)s = 'skipped' THEN 'skipped'
                      WHEN NOT (SELECT yes FROM asked) THEN 'approved'
                      WHEN %(decision)s = 'approved' THEN 'succeeded'
                      ELSE 'skipped' END,
        run_after = now(),
        finished_at = CASE WHEN %(decision)s = 'skipped' OR (SELECT yes FROM asked)
                           THEN now() END
    WHERE id = %(id)s AND status = 'needs_approval'
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT id, 'decided', %(by)s,
           jsonb_build_object('from', 'needs_approval', 'to', status,
                              'decision', %(decision)s::text, 'approval_id', %(approval_id)s::bigint,
                              'note', %(note)s::text)
           || CASE WHEN %(via)s::text IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('via', %(via)s::text) END
           || CASE WHEN %(withdrawn)s::boolean THEN '{"withdrawn": true}'::jsonb
                   ELSE '{}'::jsonb END
    FROM t
)
SELECT * FROM t;

-- name: task_lock
SELECT * FROM tasks WHERE id = %(id)s FOR UPDATE;

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

-- name: event_insert
INSERT INTO task_events (task_id, kind, actor, detail)
VALUES (%(task_id)s, %(kind)s, %(actor)s, %(detail)s)
RETURNING *;
