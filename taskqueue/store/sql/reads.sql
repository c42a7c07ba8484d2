-- Reads: tasks, approvals, attachments, events and the queue's summary.
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: task_status_many
SELECT id, capability, status, worker, claim_token FROM tasks WHERE id = ANY(%(ids)s);

-- name: task_status
SELECT id, capability, status, worker, claim_token FROM tasks WHERE id = %(id)s;

-- name: task_get
SELECT * FROM tasks WHERE id = %(id)s;

-- name: task_list
SELECT * FROM tasks
WHERE (%(status)s::text IS NULL OR status = %(status)s)
  AND (%(capability)s::text IS NULL OR capability = %(capability)s)
ORDER BY id
LIMIT %(limit)s;

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

-- name: approval_list_open
SELECT a.* FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = a.task_id AND n.id > a.id)
ORDER BY a.created_at, a.id;

-- name: attachment_list_many
SELECT id, approval_id, filename, content_type, size_bytes, sha256
FROM approval_attachments WHERE approval_id = ANY(%(approval_ids)s) ORDER BY id;

-- name: attachment_get
SELECT * FROM approval_attachments WHERE id = %(id)s;

-- name: event_list_for_task
-- task_history (migration 0012): task_events with each task's `enqueued` event read back
-- from its row.
SELECT * FROM task_history WHERE task_id = %(task_id)s ORDER BY id;

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

-- name: task_search
-- One page of the operators' task list (the web's Tasks page). The finished tasks (millions)
-- and the unfinished ones (a queue's depth) are read apart, each through its own indexes
-- (migration 0026's partial ones for the finished), and merged. The filters (the block
-- task_search_filters), the keyset and the order are filled in by ReadsMixin.task_search
-- from fixed text; it runs unprepared, so each run is planned for the filters it has.
SELECT * FROM (
    (SELECT t.* FROM tasks t
     WHERE t.status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled')
       AND {filters} AND {keyset}
     ORDER BY {order} LIMIT %(limit)s)
    UNION ALL
    (SELECT t.* FROM tasks t
     WHERE t.status IN ('pending', 'running', 'needs_approval', 'approved')
       AND {filters} AND {keyset}
     ORDER BY {order} LIMIT %(limit)s)
) t
ORDER BY {order}
LIMIT %(limit)s;

-- name: task_search_filters
-- Every filter is optional (NULL or an empty list: not filtered). decided_by holds
-- case-folded actor names: a decision's, or an approve's (four eyes). text is words of the
-- payload's strings and numbers or of a question (PostgreSQL's full text, 'simple': any
-- case, no stemming); with prefix, the beginning of a word. Migration 0027 indexes both.
(%(capability)s::text IS NULL OR t.capability = %(capability)s)
  AND (%(status)s::text IS NULL OR t.status = %(status)s)
  AND (%(created_after)s::timestamptz IS NULL OR t.created_at >= %(created_after)s)
  AND (%(created_before)s::timestamptz IS NULL OR t.created_at < %(created_before)s)
  AND (cardinality(%(decided_by)s::text[]) = 0 OR t.id IN (
        SELECT a.task_id FROM approvals a WHERE lower(a.decided_by) = ANY(%(decided_by)s)
        UNION
        SELECT a.task_id FROM approval_votes v JOIN approvals a ON a.id = v.approval_id
        WHERE lower(v.person) = ANY(%(decided_by)s)))
  AND (%(text)s::text IS NULL
       OR jsonb_to_tsvector('simple', t.payload, '["string", "numeric"]') @@ (CASE
            WHEN %(prefix)s THEN to_tsquery('simple', quote_literal(%(text)s) || ':*')
            ELSE plainto_tsquery('simple', %(text)s) END)
       OR t.id = ANY(ARRAY(
            SELECT q.task_id FROM approvals q
            WHERE to_tsvector('simple', q.question) @@ (CASE
                WHEN %(prefix)s THEN to_tsquery('simple', quote_literal(%(text)s) || ':*')
                ELSE plainto_tsquery('simple', %(text)s) END))))
