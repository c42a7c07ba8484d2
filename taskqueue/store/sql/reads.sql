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

-- name: approval_list_open_ids
-- The open approvals' ids in the inbox's order (approval_list_open's rows, without them).
SELECT a.id FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = a.task_id AND n.id > a.id)
ORDER BY a.created_at, a.id;

-- name: approval_list_open_start
-- Where the inbox's page after approval `after` starts, as a key (created_at, id): right
-- after `after` while it is open (id + 1: ids are integers, so ">" becomes ">="); once it
-- was decided, at the first open approval, in the inbox's order, with a greater id. No
-- row: no open approval comes after it. "Open" as in approval_list_open_page.
WITH open_after AS (
    SELECT a.created_at, a.id + 1 AS id FROM approvals a
    WHERE a.id = %(after)s AND a.decision IS NULL
      AND (SELECT t.status FROM tasks t WHERE t.id = a.task_id) = 'needs_approval'
      AND (SELECT max(n.id) FROM approvals n WHERE n.task_id = a.task_id) = a.id
)
SELECT created_at, id FROM open_after
UNION ALL
(SELECT a.created_at, a.id FROM approvals a
 WHERE a.id > %(after)s AND a.decision IS NULL
   AND (SELECT t.status FROM tasks t WHERE t.id = a.task_id) = 'needs_approval'
   AND (SELECT max(n.id) FROM approvals n WHERE n.task_id = a.task_id) = a.id
   AND NOT EXISTS (SELECT 1 FROM open_after)
 ORDER BY a.created_at, a.id
 LIMIT 1);

-- name: approval_list_open_page
-- One page of approval_list_open_ids: the open approvals from the key (created_at, id)
-- `start_at, start_id` on, read in order from approvals_inbox_idx (migration 0028) and
-- stopped at the page's end. Open is approval_list_open's rule (undecided, its task
-- parked, its task's latest), written as two probes for each approval read (its task's
-- status, its task's latest approval id) so that the plan is always this walk: as joins,
-- the planner's guess of the rows in the key's range (thousands, from the created_at
-- histogram, for a page's 25) chose a hash join that read every task.
SELECT a.id FROM approvals a
WHERE a.decision IS NULL
  AND (a.created_at, a.id) >= (%(start_at)s::timestamptz, %(start_id)s::bigint)
  AND (SELECT t.status FROM tasks t WHERE t.id = a.task_id) = 'needs_approval'
  AND (SELECT max(n.id) FROM approvals n WHERE n.task_id = a.task_id) = a.id
ORDER BY a.created_at, a.id
LIMIT %(limit)s;

-- name: approval_count_undecided_before
-- The undecided approvals before the key (created_at, id), and all of them: from the
-- index alone, no probes (about 10 ms at 100,000), so a page's position is counted from the
-- nearer end (ReadsMixin._open_before).
SELECT count(*) FILTER (
           WHERE (created_at, id) < (%(start_at)s::timestamptz, %(start_id)s::bigint)
       ) AS before,
       count(*) AS total
FROM approvals WHERE decision IS NULL;

-- name: approval_count_open_before
-- The open approvals before the key (created_at, id), with approval_list_open_page's two
-- probes for each undecided approval there: it costs what the page's depth is.
SELECT count(*) AS n FROM approvals a
WHERE a.decision IS NULL
  AND (a.created_at, a.id) < (%(start_at)s::timestamptz, %(start_id)s::bigint)
  AND (SELECT t.status FROM tasks t WHERE t.id = a.task_id) = 'needs_approval'
  AND (SELECT max(n.id) FROM approvals n WHERE n.task_id = a.task_id) = a.id;

-- name: approval_count_open_from
-- The open approvals from the key (created_at, id) on, likewise: it costs what is left
-- after the page's start.
SELECT count(*) AS n FROM approvals a
WHERE a.decision IS NULL
  AND (a.created_at, a.id) >= (%(start_at)s::timestamptz, %(start_id)s::bigint)
  AND (SELECT t.status FROM tasks t WHERE t.id = a.task_id) = 'needs_approval'
  AND (SELECT max(n.id) FROM approvals n WHERE n.task_id = a.task_id) = a.id;

-- name: approval_count_open
-- How many approvals approval_list_open_ids lists, counted as the parked tasks: a parked
-- task has exactly one open approval, its latest. A task enters needs_approval only with a
-- new approval, in one transaction (task_park with approval_insert, an ask's
-- request_task_insert with request_approval_insert), and an approval is decided only while
-- it is its parked task's latest, in the transaction that moves the task out
-- (approval_decide with task_after_decision, approval_expire_many; a partial four-eyes
-- approve leaves it undecided). An index-only scan of tasks_active_idx: the list's join
-- and NOT EXISTS would cost two index probes an approval (about 100 ms at 100,000).
SELECT count(*) AS n FROM tasks WHERE status = 'needs_approval';

-- name: approval_get_many
SELECT * FROM approvals WHERE id = ANY(%(ids)s);

-- name: task_get_many
SELECT * FROM tasks WHERE id = ANY(%(ids)s);

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
-- One page of the operators' task list (the web's Tasks page). The tasks at rest (finished,
-- or waiting for a person: millions, and every open approval) and the moving ones
-- (pending, approved, running: a queue's depth) are read apart, each through its own
-- indexes (migration 0030's partial ones, in the page's orders, for those at rest; the
-- claim's and the caps' for the others), and merged. ReadsMixin.task_search fills in the
-- filters given (the task_search_by_* blocks below, joined with AND: only those, so the
-- planner sees each as a plain condition or a semi-join; `false` in the half a status
-- filter rules out), the keyset and the order, from fixed text.
SELECT * FROM (
    (SELECT t.* FROM tasks t
     WHERE t.status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval')
       AND {at_rest_filters} AND {keyset}
     ORDER BY {order} LIMIT %(limit)s)
    UNION ALL
    (SELECT t.* FROM tasks t
     WHERE (t.status IN ('pending', 'approved') OR t.status = 'running')
       AND {moving_filters} AND {keyset}
     ORDER BY {order} LIMIT %(limit)s)
) t
ORDER BY {order}
LIMIT %(limit)s;

-- name: task_search_by_capability
t.capability = %(capability)s;

-- name: task_search_by_status
t.status = %(status)s;

-- name: task_search_by_created_after
t.created_at >= %(created_after)s;

-- name: task_search_by_created_before
t.created_at < %(created_before)s;

-- name: task_search_by_decided_by
-- Case-folded actor names: a decision's, or an approve's (four eyes: every approve is a
-- vote, the deciding one too). For a name with few decisions: its tasks, then the page.
t.id IN (
    SELECT a.task_id FROM approvals a WHERE lower(a.decided_by) = ANY(%(decided_by)s)
    UNION ALL
    SELECT a.task_id FROM approval_votes v JOIN approvals a ON a.id = v.approval_id
    WHERE lower(v.person) = ANY(%(decided_by)s));

-- name: task_search_by_decided_by_many
-- The same for a name with many decisions: the page's order is walked and each task probed
-- (approvals_task_idx, once: its approvals' deciders, then their votes), which stops at the
-- page's 51st instead of reading them all.
EXISTS (
    SELECT 1 FROM approvals a
    WHERE a.task_id = t.id
      AND (lower(a.decided_by) = ANY(%(decided_by)s)
           OR EXISTS (SELECT 1 FROM approval_votes v
                      WHERE v.approval_id = a.id AND lower(v.person) = ANY(%(decided_by)s))));

-- name: task_search_by_text
-- Words of the payload's strings and numbers, or of a question (PostgreSQL's full text,
-- 'simple': any case, no stemming); the tsquery comes from task_search_words. For a rare
-- text: the matches through the GIN indexes (migrations 0027 and 0030; the moving tasks, a
-- queue's depth, one by one), then the page.
t.id IN (
    SELECT w.id FROM tasks w
    WHERE w.status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval')
      AND jsonb_to_tsvector('simple', w.payload, '["string", "numeric"]') @@ %(words)s::tsquery
    UNION ALL
    SELECT w.id FROM tasks w
    WHERE (w.status IN ('pending', 'approved') OR w.status = 'running')
      AND jsonb_to_tsvector('simple', w.payload, '["string", "numeric"]') @@ %(words)s::tsquery
    UNION ALL
    SELECT q.task_id FROM approvals q
    WHERE to_tsvector('simple', q.question) @@ %(words)s::tsquery);

-- name: task_search_by_text_many
-- The same for a common text: the page's order is walked and each task matched in place.
-- (A scalar subquery, not EXISTS: the planner would turn an EXISTS under OR into a hash of
-- every matching question, the very read this block is for avoiding.)
(jsonb_to_tsvector('simple', t.payload, '["string", "numeric"]') @@ %(words)s::tsquery
 OR coalesce((SELECT bool_or(to_tsvector('simple', q.question) @@ %(words)s::tsquery)
              FROM approvals q WHERE q.task_id = t.id), false));

-- name: task_search_decided_by_count
-- How many decisions and approves a name has, up to %(cap)s: which of the two blocks fits.
SELECT count(*)::int AS n FROM (
    SELECT 1 FROM approvals a WHERE lower(a.decided_by) = ANY(%(decided_by)s)
    UNION ALL
    SELECT 1 FROM approval_votes v WHERE lower(v.person) = ANY(%(decided_by)s)
    LIMIT %(cap)s) found;

-- name: task_search_decided_by_common
-- How many decisions and approves the names have, as the last ANALYZE saw them: their
-- shares among the most common values of the two case-folded name indexes (pg_stats of
-- each index's expression) times the rows each indexes; a name not among them adds nothing.
-- NULL without statistics. A lower bound, as task_search_text_common's.
SELECT sum(c.reltuples * coalesce(found.share, 0))::float8 AS n
FROM pg_namespace ns
JOIN pg_stats s ON s.schemaname = ns.nspname
JOIN pg_class c ON c.relnamespace = ns.oid AND c.relname = s.tablename
CROSS JOIN LATERAL (
    SELECT sum(s.most_common_freqs[array_position(s.most_common_vals::text::text[], name)])
             AS share
    FROM unnest(%(decided_by)s::text[]) AS name) found
WHERE ns.oid = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('tasks'))
  AND s.tablename IN ('approvals_decided_by_idx', 'approval_votes_person_idx');

-- name: task_search_text_count
-- How many tasks at rest and questions a text matches, up to %(cap)s (through the GIN
-- indexes).
SELECT count(*)::int AS n FROM (
    SELECT 1 FROM tasks w
    WHERE w.status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval')
      AND jsonb_to_tsvector('simple', w.payload, '["string", "numeric"]') @@ %(words)s::tsquery
    UNION ALL
    SELECT 1 FROM approvals q WHERE to_tsvector('simple', q.question) @@ %(words)s::tsquery
    LIMIT %(cap)s) found;

-- name: task_search_words
-- A search text as a tsquery: plainto_tsquery's words, or with prefix each word's beginning.
-- The words themselves (lexemes) for task_search_text_common, but for a beginning.
SELECT (CASE WHEN %(prefix)s
             THEN to_tsquery('simple', quote_literal(%(text)s) || ':*')
             ELSE plainto_tsquery('simple', %(text)s) END)::text AS words,
       CASE WHEN NOT %(prefix)s
            THEN tsvector_to_array(to_tsvector('simple', %(text)s)) END AS lexemes;

-- name: task_search_text_common
-- How many tasks at rest and questions hold every word of a text, at least, as the last
-- ANALYZE saw them: each GIN index's most common words and their shares (pg_stats of its
-- expression), and the least share that all the words can have together (the shares' sum
-- less one for each word after the first: two words common alone may never meet), times
-- the rows it indexes. An index where a word is not among the most common adds nothing (the
-- word is rarer than those); NULL without statistics (never analysed, or not readable by
-- this role). A lower bound that tells a common text without counting it
-- (ReadsMixin._search_block).
SELECT sum(CASE WHEN common.unknown = 0 THEN c.reltuples * greatest(common.share, 0)
                ELSE 0 END)::float8 AS n
FROM pg_namespace ns
JOIN pg_stats s ON s.schemaname = ns.nspname
JOIN pg_class c ON c.relnamespace = ns.oid AND c.relname = s.tablename
CROSS JOIN LATERAL (
    SELECT sum(f) - (count(*) - 1) AS share, count(*) FILTER (WHERE f IS NULL) AS unknown
    FROM (SELECT s.most_common_elem_freqs[array_position(s.most_common_elems::text::text[],
                                                         w)] AS f
          FROM unnest(%(lexemes)s::text[]) AS w) found) common
-- The schema the queue's tables are read from (its search_path's).
WHERE ns.oid = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('tasks'))
  AND s.tablename IN ('tasks_at_rest_words_idx', 'approvals_question_words_idx');
