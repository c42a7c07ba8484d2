-- Producers: adding tasks, one or a batch, with dedupe keys (TaskQueue.task_enqueue*).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

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
-- The task's `enqueued` event is its row (migration 0012): enqueued_event_id, enqueued_by.
WITH ins AS (
    INSERT INTO tasks (capability, priority, payload, max_attempts, run_after, dedupe_key,
                       enqueued_event_id, enqueued_by)
    VALUES (
        %(capability)s, %(priority)s, %(payload)s,
        COALESCE(%(max_attempts)s,
                 (SELECT max_attempts FROM capabilities WHERE capability = %(capability)s), 3),
        now() + make_interval(secs => %(delay)s),
        %(dedupe_key)s, nextval('task_events_id_seq'), %(actor)s)
    ON CONFLICT (capability, dedupe_key)
        WHERE dedupe_key IS NOT NULL
          AND status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded')
        DO NOTHING
    RETURNING id
)
SELECT id, true AS inserted FROM ins
UNION ALL
SELECT id, false AS inserted FROM tasks
WHERE capability = %(capability)s AND dedupe_key = %(dedupe_key)s
  AND status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded')
  AND NOT EXISTS (SELECT 1 FROM ins);

-- name: task_enqueue_many
-- A whole batch in one statement; each task's `enqueued` event is its row (migration
-- 0012). The caller took the batch's dedupe keys (dedupe_lock) first, so under READ
-- COMMITTED this snapshot sees every committed holder of those keys. Within the batch the
-- first item of a key is inserted and the later ones return its id; a key held by an
-- unfinished or succeeded task returns the holder. Ids come from the sequence up front so
-- each input row knows its task. A row with no id back met a conflict this snapshot cannot
-- see (a holder changed status meanwhile): the caller runs task_enqueue for it. Its NOTIFY
-- is sent at commit, like every NOTIFY.
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
    INSERT INTO tasks (id, capability, priority, payload, max_attempts, run_after, dedupe_key,
                       enqueued_event_id, enqueued_by)
    SELECT i.id, %(capability)s, i.priority, i.payload,
           COALESCE(i.max_attempts,
                    (SELECT max_attempts FROM capabilities WHERE capability = %(capability)s),
                    3),
           now() + make_interval(secs => i.delay), i.dedupe_key,
           nextval('task_events_id_seq'), %(actor)s
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
-- A batch without dedupe keys: every item is a new task (its `enqueued` event is its row,
-- migration 0012), so there is nothing to look up and the statement runs alone in
-- autocommit; the insert runs to completion though nothing reads it back. Ids come from the
-- sequence up front, in the batch's order (unnest yields the items in order); the payloads
-- arrive as checked JSON text.
WITH input AS MATERIALIZED (
    SELECT i.*, nextval('tasks_id_seq') AS id
    FROM unnest(%(priorities)s::int[], %(payloads)b::text[]::jsonb[], %(max_attempts)s::int[],
                %(delays)s::float8[])
         WITH ORDINALITY AS i(priority, payload, max_attempts, delay, n)
), ins AS (
    INSERT INTO tasks (id, capability, priority, payload, max_attempts, run_after,
                       enqueued_event_id, enqueued_by)
    SELECT i.id, %(capability)s, i.priority, i.payload,
           COALESCE(i.max_attempts,
                    (SELECT max_attempts FROM capabilities WHERE capability = %(capability)s),
                    3),
           now() + make_interval(secs => i.delay), nextval('task_events_id_seq'), %(actor)s
    FROM input i
    ORDER BY i.n
)
SELECT i.id, (SELECT pg_notify(%(channel)s, %(capability)s)) AS notified
FROM input i
ORDER BY i.n;

-- name: task_dedupe_known
-- Which of these dedupe keys any task of the capability holds, in any status (a producer
-- that must never enqueue the same thing twice, even after a skip or a failure).
SELECT DISTINCT dedupe_key FROM tasks
WHERE capability = %(capability)s AND dedupe_key = ANY(%(keys)s::text[]);
