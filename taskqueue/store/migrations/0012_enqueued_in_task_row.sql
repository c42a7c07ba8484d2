-- A task's `enqueued` event lives in its own row (issue 26, goal 4): writing it as a second
-- row, with its two index entries and its foreign-key check, was half the cost of a batch
-- enqueue. The row keeps what that event held: when (created_at, the same transaction
-- time), by whom (enqueued_by, the actor) and the event's id (enqueued_event_id, drawn from
-- task_events' own sequence at the insert, so it is unique among the events and sorts before
-- every later event of the task). `to` and `dedupe_key` were always 'pending' and the
-- task's dedupe key.
--
-- task_history is task_events with those events read back from the rows, column for column
-- as they were written before: what TaskQueue.task_detail, `signoff show` and anyone's SQL
-- should read for a task's whole story. Tasks enqueued before this migration have their
-- `enqueued` row in task_events and no enqueued_event_id: each event is read once either
-- way. Both columns are new and NULL for existing rows: ADD COLUMN rewrites nothing.
ALTER TABLE tasks ADD COLUMN enqueued_event_id bigint, ADD COLUMN enqueued_by text;

CREATE VIEW task_history AS
SELECT e.id, e.task_id, e.at, e.kind, e.actor, e.detail
FROM task_events e
UNION ALL
SELECT t.enqueued_event_id, t.id, t.created_at, 'enqueued', t.enqueued_by,
       jsonb_build_object('to', 'pending', 'dedupe_key', t.dedupe_key)
FROM tasks t
WHERE t.enqueued_event_id IS NOT NULL;

-- The `enqueued` event stays as append-only as the rows of task_events: once written, its
-- id and actor never change. UPDATE OF: the claims and completions, which set neither
-- column, do not even evaluate the condition.
CREATE FUNCTION signoff_enqueued_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a task''s enqueued event is append-only, like task_events';
END $$;

CREATE TRIGGER tasks_enqueued_append_only
    BEFORE UPDATE OF enqueued_event_id, enqueued_by ON tasks
    FOR EACH ROW
    WHEN (OLD.enqueued_event_id IS NOT NULL
          AND (NEW.enqueued_event_id IS DISTINCT FROM OLD.enqueued_event_id
               OR NEW.enqueued_by IS DISTINCT FROM OLD.enqueued_by))
    EXECUTE FUNCTION signoff_enqueued_append_only();
