-- Indexes for the capped claim (task_claim_capped). max_parked now bounds the "held"
-- tasks (claimed at least once and not finished) and resumed work is picked apart from
-- new work; both scans touch only unfinished rows, so finished rows cost nothing.
CREATE INDEX tasks_held_idx ON tasks (capability)
    WHERE first_claimed_at IS NOT NULL
      AND status IN ('pending', 'running', 'needs_approval', 'approved');

CREATE INDEX tasks_resumable_idx ON tasks
    (capability, (status = 'approved') DESC, priority DESC, id)
    WHERE status IN ('pending', 'approved') AND first_claimed_at IS NOT NULL;
