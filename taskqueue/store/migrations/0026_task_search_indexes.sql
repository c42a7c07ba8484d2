-- The operators' task list (TaskQueue.task_search): a filtered page over millions of
-- finished tasks reads only its page's rows. Partial on the finished statuses: a task
-- enters these indexes once, when it finishes, so the claim's hot path (insert, claim,
-- heartbeat, complete) writes nothing more; the unfinished ones (a queue's depth) are read
-- through the indexes the claim and the caps already keep.
CREATE INDEX tasks_finished_created_idx ON tasks (created_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled');
CREATE INDEX tasks_finished_status_idx ON tasks (status, created_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled');
CREATE INDEX tasks_finished_capability_idx ON tasks (capability, created_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled');
CREATE INDEX tasks_finished_updated_idx ON tasks (updated_at, id)
    WHERE status IN ('succeeded', 'failed', 'skipped', 'expired', 'cancelled');

-- "Who decided": a decision's actor, and an approve's person (four eyes), case-folded.
-- (Not partial: ANALYZE then keeps the expression's statistics, which tell a name with
-- few decisions from one with many.)
CREATE INDEX approvals_decided_by_idx ON approvals (lower(decided_by), task_id);
CREATE INDEX approval_votes_person_idx ON approval_votes (lower(person));
