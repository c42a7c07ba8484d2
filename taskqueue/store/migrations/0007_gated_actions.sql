-- The gated actions (taskqueue/runtime/gate.py): one row per approval that permitted an
-- action with consequences outside the database. The row is the "started" marker, saved
-- under the worker's claim before the action runs, then its result. The approval is the
-- primary key, so one approve permits at most one action: a second worker, a second
-- slice or a second call that finds the row never acts on that approve again unless the
-- action's own check says it did not happen (`attempts` counts those retries).
CREATE TABLE gated_actions (
    approval_id     bigint PRIMARY KEY REFERENCES approvals (id) ON DELETE CASCADE,
    task_id         bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    kind            text NOT NULL,
    fingerprint     text NOT NULL,
    idempotency_key uuid NOT NULL,
    approved_by     text NOT NULL,
    detail          jsonb NOT NULL DEFAULT '{}'::jsonb,
    worker          text NOT NULL,
    claim_token     uuid NOT NULL,
    attempts        integer NOT NULL DEFAULT 1,
    started_at      timestamptz NOT NULL DEFAULT now(),
    result          jsonb,
    -- acted: the action ran and returned; verified: its check found it had happened.
    settled_by      text CHECK (settled_by IN ('acted', 'verified')),
    finished_at     timestamptz,
    CHECK ((finished_at IS NULL) = (settled_by IS NULL))
);

-- A task's actions (the pruner's cascade and gated_action_list look them up by task).
CREATE INDEX gated_actions_task_idx ON gated_actions (task_id);
