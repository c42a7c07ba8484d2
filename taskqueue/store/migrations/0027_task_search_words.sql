-- The operators' task list's text search (TaskQueue.task_search): the words of a finished
-- task's payload (its strings and numbers) and of every question, in GIN indexes, so a
-- search over millions of finished tasks reads only the matching rows. 'simple': any case,
-- no stemming, an e-mail address or a host name as one word. The payload's index is
-- partial, written once when a task finishes (never on the claim's hot path).
CREATE INDEX tasks_finished_words_idx ON tasks
    USING gin (jsonb_to_tsvector('simple', payload, '["string", "numeric"]'))
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled');
CREATE INDEX approvals_question_words_idx ON approvals
    USING gin (to_tsvector('simple', question));
