-- The gated actions (taskqueue/runtime/gate.py, store/gates.py): the started marker, its
-- result, and the read that checks an approval right before an action. Named blocks, loaded
-- once with every .sql file here; the TaskQueue method has the query's name. Every write
-- is under the fence (the task is running, held by this worker under this claim): `held`
-- false means the claim is lost and nothing was written.

-- name: gated_action_check
-- The task as it is now, its latest approval, and that approval's action (g_*) if any:
-- one snapshot, read right before acting.
SELECT t.id AS task_id, t.status, t.worker, t.claim_token,
       a.id AS approval_id, a.decision, a.decided_by, a.request, a.required, a.groups,
       COALESCE((SELECT c.signed_approvals FROM capabilities c
                 WHERE c.capability = t.capability), false) AS signed_approvals,
       ARRAY(SELECT v.person FROM approval_votes v WHERE v.approval_id = a.id AND v.counts
             ORDER BY v.person) AS approvers,
       g.kind AS g_kind, g.fingerprint AS g_fingerprint, g.idempotency_key AS g_key,
       g.approved_by AS g_approved_by,
       g.detail AS g_detail, g.worker AS g_worker, g.claim_token AS g_claim,
       g.attempts AS g_attempts, g.started_at AS g_started_at, g.result AS g_result,
       g.settled_by AS g_settled_by, g.finished_at AS g_finished_at
FROM tasks t
LEFT JOIN LATERAL (
    SELECT * FROM approvals ap WHERE ap.task_id = t.id ORDER BY ap.id DESC LIMIT 1
) a ON true
LEFT JOIN gated_actions g ON g.approval_id = a.id
WHERE t.id = %(task_id)s;

-- name: gated_action_start
-- The marker, under the fence and only for the task's latest approval. The task row is
-- locked first, so a rescue or a cancel committed meanwhile is seen (no row: lost). A
-- marker already there for this approval wins (ON CONFLICT): `started` is then false.
WITH t AS (
    SELECT id FROM tasks
    WHERE id = %(task_id)s AND status = 'running' AND worker = %(worker)s
      AND claim_token = %(claim)s::uuid
    FOR UPDATE
), g AS (
    INSERT INTO gated_actions (approval_id, task_id, kind, fingerprint, idempotency_key,
                               approved_by, detail, worker, claim_token)
    SELECT a.id, t.id, %(kind)s, %(fingerprint)s, %(key)s::uuid, a.decided_by,
           COALESCE(%(detail)s, '{}'::jsonb), %(worker)s, %(claim)s::uuid
    FROM t JOIN approvals a ON a.task_id = t.id AND a.id = %(approval_id)s
    WHERE a.decision = 'approved' AND a.decided_by IS NOT NULL
      AND a.id = (SELECT max(id) FROM approvals WHERE task_id = t.id)
    ON CONFLICT (approval_id) DO NOTHING
    RETURNING *
)
SELECT EXISTS (SELECT 1 FROM t) AS held, g.* FROM (SELECT 1) one LEFT JOIN g ON true;

-- name: gated_action_restart
-- Its check said the action did not happen: act once more under the same approve. The
-- attempt number is compared, so of two slices that raced only one restarts it.
WITH t AS (
    SELECT id FROM tasks
    WHERE id = %(task_id)s AND status = 'running' AND worker = %(worker)s
      AND claim_token = %(claim)s::uuid
    FOR UPDATE
), g AS (
    UPDATE gated_actions SET attempts = attempts + 1, worker = %(worker)s,
        claim_token = %(claim)s::uuid, started_at = now()
    FROM t
    WHERE gated_actions.approval_id = %(approval_id)s AND gated_actions.task_id = t.id
      AND gated_actions.finished_at IS NULL AND gated_actions.attempts = %(attempts)s
    RETURNING gated_actions.*
)
SELECT EXISTS (SELECT 1 FROM t) AS held, g.* FROM (SELECT 1) one LEFT JOIN g ON true;

-- name: gated_action_finish
-- The result (what the action returned, or what its check found), once.
WITH t AS (
    SELECT id FROM tasks
    WHERE id = %(task_id)s AND status = 'running' AND worker = %(worker)s
      AND claim_token = %(claim)s::uuid
    FOR UPDATE
), g AS (
    UPDATE gated_actions SET result = %(result)s, settled_by = %(settled_by)s,
        finished_at = now()
    FROM t
    WHERE gated_actions.approval_id = %(approval_id)s AND gated_actions.task_id = t.id
      AND gated_actions.finished_at IS NULL
    RETURNING gated_actions.*
)
SELECT EXISTS (SELECT 1 FROM t) AS held, g.* FROM (SELECT 1) one LEFT JOIN g ON true;

-- name: gated_action_drop
-- The action certainly did not happen (the far side refused it): the marker goes, so the
-- same approve may try again.
WITH t AS (
    SELECT id FROM tasks
    WHERE id = %(task_id)s AND status = 'running' AND worker = %(worker)s
      AND claim_token = %(claim)s::uuid
    FOR UPDATE
), g AS (
    DELETE FROM gated_actions USING t
    WHERE gated_actions.approval_id = %(approval_id)s AND gated_actions.task_id = t.id
      AND gated_actions.finished_at IS NULL
    RETURNING gated_actions.*
)
SELECT EXISTS (SELECT 1 FROM t) AS held, g.* FROM (SELECT 1) one LEFT JOIN g ON true;

-- name: gated_action_list
SELECT * FROM gated_actions WHERE task_id = %(task_id)s ORDER BY approval_id;
