-- The operators' task list (TaskQueue.task_search) reads a page through indexes in its
-- order, and a task waiting for a person (needs_approval) now has its entries there too
-- (issue 44). With 100,000 open approvals, every filtered page checked each of them one by
-- one (who decided, a question's word: 0.2 to 0.5 s), because only finished tasks were in
-- these indexes. Now the list reads tasks "at rest" (finished, or waiting for a person)
-- through these indexes and the moving ones (pending, approved, running: a queue's depth)
-- through the claim's and the caps' indexes. A task enters them when it parks (or is asked)
-- and when it finishes, so the claim's hot path (insert, claim, heartbeat, complete) still
-- writes nothing more; a park writes five more index entries. Each index replaces migration
-- 0026's or 0027's finished-only one of the same key, so the table keeps as many indexes.
CREATE INDEX tasks_at_rest_created_idx ON tasks (created_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval');
CREATE INDEX tasks_at_rest_status_idx ON tasks (status, created_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval');
CREATE INDEX tasks_at_rest_capability_idx ON tasks (capability, created_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval');
CREATE INDEX tasks_at_rest_updated_idx ON tasks (updated_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval');
CREATE INDEX tasks_at_rest_words_idx ON tasks
    USING gin (jsonb_to_tsvector('simple', payload, '["string", "numeric"]'))
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled', 'needs_approval');

DROP INDEX tasks_finished_created_idx;
DROP INDEX tasks_finished_status_idx;
DROP INDEX tasks_finished_capability_idx;
DROP INDEX tasks_finished_updated_idx;
DROP INDEX tasks_finished_words_idx;
